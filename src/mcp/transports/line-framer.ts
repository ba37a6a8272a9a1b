/**
 * Splits a byte stream into newline-ended lines with bounded memory. A line longer than the
 * limit is reported once, as soon as it passes the limit, and its bytes are dropped up to
 * the next newline instead of being buffered, so a hostile or broken peer can neither
 * grow the server's memory nor make it stop reading (SPEC §14).
 */
export type Frame = { kind: "line"; text: string } | { kind: "oversized"; limit: number };

const NEWLINE = 0x0a;

export class LineFramer {
  private parts: Uint8Array[] = [];
  private size = 0;
  /** Inside a line past the limit: its bytes are being dropped. */
  discarding = false;

  constructor(private readonly maxLineBytes: number) {}

  /** The frames completed by this chunk, in order. */
  push(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!this.discarding) {
        if (this.size + (end - start) > this.maxLineBytes) {
          this.parts = [];
          this.size = 0;
          this.discarding = true;
          frames.push({ kind: "oversized", limit: this.maxLineBytes });
        } else if (end > start) {
          this.parts.push(chunk.subarray(start, end));
          this.size += end - start;
        }
      }
      if (nl === -1) break;
      if (!this.discarding) frames.push({ kind: "line", text: this.take() });
      this.discarding = false;
      start = nl + 1;
    }
    // Chunks are reused by some streams: keep a copy of what stays buffered.
    if (this.parts.length && this.parts[this.parts.length - 1]!.buffer === chunk.buffer) {
      this.parts[this.parts.length - 1] = this.parts[this.parts.length - 1]!.slice();
    }
    return frames;
  }

  private take(): string {
    const bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [];
    this.size = 0;
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  }
}
