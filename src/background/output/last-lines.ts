import type { ByteSource } from "./shape/items.ts";

const SCAN_CHUNK = 1 << 20;

/** Stream offset where the last `n` lines of [start, end) begin, scanning backwards (`tail_lines`). */
export function startOfLastLines(stream: ByteSource, start: number, end: number, n: number): number {
  if (n <= 0) return end;
  let seen = 0;
  let pos = end;
  let skipFinalNewline = true;
  while (pos > start) {
    const from = Math.max(start, pos - SCAN_CHUNK);
    const chunk = stream.read(from, pos);
    if (!chunk) return pos; // older bytes are gone: show what we have
    for (let i = chunk.byteLength - 1; i >= 0; i--) {
      if (chunk[i] !== 10) {
        skipFinalNewline = false;
        continue;
      }
      if (skipFinalNewline) {
        skipFinalNewline = false;
        continue;
      }
      if (++seen === n) return from + i + 1;
    }
    pos = from;
  }
  return start;
}
