/**
 * Bounded in-memory copy of one output stream: the first `limit/2` bytes (head) and the
 * most recent `limit/2` bytes (tail), plus the total byte count. Whatever a child writes,
 * memory stays at `limit` bytes. The tail is a ring that grows to its size and is then
 * overwritten in place: a flood allocates nothing per chunk (no garbage for the GC to
 * fall behind on).
 */
export class OutputBuffer {
  private readonly headCap: number;
  private readonly tailCap: number;
  private headChunks: Uint8Array[] = [];
  private headLen = 0;
  /** The ring: linear (oldest byte at 0) until it has grown to tailCap, then wrapping. */
  private ring = new Uint8Array(0);
  /** Where the next byte goes; once the ring wraps, also where the oldest byte is. */
  private ringPos = 0;
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
    this.appendTail(chunk);
  }

  private appendTail(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    if (chunk.byteLength >= this.tailCap) chunk = chunk.subarray(chunk.byteLength - this.tailCap);
    const need = this.tailLen + chunk.byteLength;
    if (need > this.ring.length && this.ring.length < this.tailCap) {
      // Still linear: grow (doubling, up to tailCap) and keep the bytes at the start.
      const grown = new Uint8Array(Math.min(this.tailCap, Math.max(need, this.ring.length * 2, 4096)));
      grown.set(this.ring.subarray(0, this.tailLen));
      this.ring = grown;
      this.ringPos = this.tailLen;
    }
    const cap = this.ring.length;
    const first = Math.min(chunk.byteLength, cap - this.ringPos);
    this.ring.set(chunk.subarray(0, first), this.ringPos);
    if (first < chunk.byteLength) this.ring.set(chunk.subarray(first), 0);
    this.ringPos = (this.ringPos + chunk.byteLength) % cap;
    this.tailLen = Math.min(cap, need);
  }

  /** Account for `n` bytes that are not kept (restoring a stream from its log file). */
  skip(n: number): void {
    if (n <= 0) return;
    this.ringPos = 0;
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
    // The tail's part: at most two pieces of the ring (before and after its wrap point).
    const lo = Math.max(start, this.tailStart);
    if (lo < end) {
      const cap = this.ring.length;
      const oldest = (this.ringPos - this.tailLen + cap) % cap;
      const from = (oldest + lo - this.tailStart) % cap;
      const n = end - lo;
      const first = Math.min(n, cap - from);
      out.set(this.ring.subarray(from, from + first), lo - start);
      if (first < n) out.set(this.ring.subarray(0, n - first), lo - start + first);
      written += n;
    }
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
