/**
 * Splits one output stream of a spawner channel (spawner.ts) into the command's bytes and
 * the protocol's marker lines, `<nonce><kind><value>\n`. The nonce is fresh per command,
 * so a command cannot print one by accident. A marker is written with one small write,
 * so it arrives whole, but it may land between any two bytes of the relayed output (two
 * writers share the channel): it is cut out wherever it is, and the bytes around it are
 * passed on in order. Bytes outside the start/end markers (rc-file chatter) are dropped.
 */
export class MarkerStream {
  private pending: Buffer = Buffer.alloc(0);
  private readonly nonce: Buffer;
  /** Whether bytes are the command's (between its start and end markers). */
  passing = false;
  /** Bytes dropped before the start marker (bounded by the caller). */
  dropped = 0;

  constructor(
    nonce: string,
    private readonly on: { data(bytes: Buffer): void; marker(kind: string, value: string): void },
  ) {
    this.nonce = Buffer.from(nonce, "latin1");
  }

  push(chunk: Buffer): void {
    let buf = this.pending.byteLength ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      const at = buf.indexOf(this.nonce);
      if (at < 0) {
        // The tail may be the beginning of a marker split across chunks: keep it back.
        const keep = this.partialNonceAtEnd(buf);
        this.emit(buf.subarray(0, buf.byteLength - keep));
        this.pending = Buffer.from(buf.subarray(buf.byteLength - keep));
        return;
      }
      this.emit(buf.subarray(0, at));
      const nl = buf.indexOf(10, at + this.nonce.byteLength);
      if (nl < 0) {
        this.pending = Buffer.from(buf.subarray(at));
        return;
      }
      const line = buf.subarray(at + this.nonce.byteLength, nl).toString("latin1");
      buf = buf.subarray(nl + 1);
      this.on.marker(line.slice(0, 1), line.slice(1));
    }
  }

  private emit(bytes: Buffer): void {
    if (!bytes.byteLength) return;
    if (this.passing) this.on.data(Buffer.from(bytes));
    else this.dropped += bytes.byteLength;
  }

  /** Length of the longest proper prefix of the nonce that `buf` ends with. */
  private partialNonceAtEnd(buf: Buffer): number {
    for (let k = Math.min(this.nonce.byteLength - 1, buf.byteLength); k > 0; k--) {
      if (buf.subarray(buf.byteLength - k).equals(this.nonce.subarray(0, k))) return k;
    }
    return 0;
  }
}
