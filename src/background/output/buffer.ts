/**
 * Bounded in-memory copy of one output stream: the first `limit/2` bytes (head) and the
 * most recent `limit/2` bytes (tail), plus the total byte count. Whatever a child writes,
 * memory stays at `limit` bytes (plus at most one chunk while trimming).
 */
export class OutputBuffer {
  private readonly headCap: number;
  private readonly tailCap: number;
  private headChunks: Uint8Array[] = [];
  private headLen = 0;
  private tailChunks: Uint8Array[] = [];
  private tailLen = 0;
  /** Bytes written to this stream so far. */
  total = 0;

  constructor(limit: number) {
    this.headCap = Math.floor(limit / 2);
    this.tailCap = limit - this.headCap;
  }

  append(chunk: Uint8Array): void {
    this.total += chunk.byteLength;
    if (this.headLen < this.headCap) {
      const take = Math.min(this.headCap - this.headLen, chunk.byteLength);
      // Copy: stream chunks may be views into larger buffers that we must not pin.
      this.headChunks.push(chunk.slice(0, take));
      this.headLen += take;
      if (take === chunk.byteLength) return;
      chunk = chunk.subarray(take);
    }
    this.tailChunks.push(chunk.byteLength > this.tailCap ? chunk.slice(chunk.byteLength - this.tailCap) : chunk.slice());
    this.tailLen += Math.min(chunk.byteLength, this.tailCap);
    while (this.tailLen > this.tailCap) {
      const first = this.tailChunks[0]!;
      const excess = this.tailLen - this.tailCap;
      if (first.byteLength <= excess) {
        this.tailChunks.shift();
        this.tailLen -= first.byteLength;
      } else {
        this.tailChunks[0] = first.slice(excess);
        this.tailLen -= excess;
      }
    }
  }

  /** Account for `n` bytes that are not kept (restoring a stream from its log file). */
  skip(n: number): void {
    if (n <= 0) return;
    this.tailChunks = [];
    this.tailLen = 0;
    this.total += n;
  }

  /** Offset of the first byte the tail holds; bytes in [headLen, tailStart) were dropped. */
  get tailStart(): number {
    return this.total - this.tailLen;
  }

  /** True when no byte has been dropped from memory. */
  get complete(): boolean {
    return this.tailStart === this.headLen;
  }

  /** Bytes [start, end) if memory still holds all of them, else null. */
  read(start: number, end: number): Uint8Array | null {
    end = Math.min(end, this.total);
    start = Math.max(0, Math.min(start, end));
    if (start >= this.headLen && end <= this.tailStart && start < end) return null;
    const out = new Uint8Array(end - start);
    let written = 0;
    const copy = (chunks: Uint8Array[], offset: number) => {
      for (const c of chunks) {
        const cStart = offset;
        offset += c.byteLength;
        const lo = Math.max(start, cStart);
        const hi = Math.min(end, offset);
        if (hi <= lo) continue;
        out.set(c.subarray(lo - cStart, hi - cStart), written);
        written += hi - lo;
      }
    };
    copy(this.headChunks, 0);
    copy(this.tailChunks, this.tailStart);
    return written === out.byteLength ? out : null;
  }

  /** Everything memory holds: the whole stream, or head and tail with the gap between. */
  held(): { head: Uint8Array; tail: Uint8Array; gapStart: number; gapEnd: number } {
    if (this.complete) {
      return { head: this.read(0, this.total)!, tail: new Uint8Array(0), gapStart: this.total, gapEnd: this.total };
    }
    return {
      head: this.read(0, this.headLen)!,
      tail: this.read(this.tailStart, this.total)!,
      gapStart: this.headLen,
      gapEnd: this.tailStart,
    };
  }
}
