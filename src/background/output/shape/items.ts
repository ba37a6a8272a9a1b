import { decode } from "../decode.ts";
import { lineKind, type LineKind } from "./line-kind.ts";
import { lineHasControl, renderLine } from "./terminal-control.ts";

/** What shaping reads: a stream's total size and its bytes (from memory or the spool). */
export interface ByteSource {
  readonly total: number;
  read(start: number, end: number): Uint8Array | null;
  /**
   * Bytes from `start` into `into` (fewer at the stream's end), without allocating: the count,
   * or null when they cannot be read. Optional; passes over a whole flood use it.
   */
  readInto?(start: number, into: Uint8Array): number | null;
  /** Where a run of bytes known to be zeros that holds `pos` ends (`pos` if none): passes skip it unread. Optional. */
  zeroRunEnd?(pos: number): number;
}

/** One line of output: its raw byte range in the stream and its rendered text. */
export interface LineItem {
  kind: "line";
  /** Raw byte range [start, end) in the stream, its newline included. */
  start: number;
  end: number;
  /** The raw text, without its newline. */
  raw: string;
  /** The text a result shows: terminal control rendered, without its newline. */
  text: string;
  /** Whether the raw line ends with a newline (the stream's last line may not). */
  newline: boolean;
  /** Bytes the line costs in a result (rendered text + newline). */
  bytes: number;
  /** What the line reports (errors and warnings are kept first). */
  reports: LineKind;
  /** The line had terminal control (so its raw bytes differ from what is shown). */
  control: boolean;
  /** Raw bytes of a line longer than LONG_LINE (to cut it at byte offsets). */
  long?: Uint8Array;
  /** A line too long to read whole (a flood without newlines): its first and last bytes only. */
  ends?: { head: Uint8Array; tail: Uint8Array };
  /** Bytes a cut long line shows at each end (CUT_KEEP unless the budget gave it more or less). */
  keep?: number;
}

/** Lines left out before any choice (folded repeats, the unread middle of a flood). */
export interface GapItem {
  kind: "gap";
  start: number;
  end: number;
  /** Lines the range holds; null when its bytes could not be read. */
  lines: number | null;
  /** A folded run of similar lines. */
  similar: boolean;
}

export type Item = LineItem | GapItem;

/** A line longer than this keeps only its first and last CUT_KEEP bytes while other lines compete for the budget. */
export const LONG_LINE = 2000;
export const CUT_KEEP = 500;

const encoder = new TextEncoder();

export function byteLength(s: string): number {
  let n = s.length;
  // Fast path for ASCII; else exact.
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return encoder.encode(s).byteLength;
  return n;
}

/** The line item of raw bytes `bytes` found at stream offset `start`. */
export function lineItem(bytes: Uint8Array, start: number): LineItem {
  const newline = bytes.byteLength > 0 && bytes[bytes.byteLength - 1] === 10;
  const body = newline ? bytes.subarray(0, -1) : bytes;
  const raw = decode(body);
  const control = lineHasControl(raw);
  const text = control ? renderLine(raw) : raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  const item: LineItem = {
    kind: "line",
    start,
    end: start + bytes.byteLength,
    raw,
    text,
    newline,
    bytes: (text === raw ? body.byteLength : byteLength(text)) + (newline ? 1 : 0),
    reports: lineKind(text),
    control,
  };
  if (body.byteLength > LONG_LINE) item.long = body;
  return item;
}

/**
 * Line items of `bytes` (found at stream offset `at`): complete lines, and a last partial one
 * if `partialEnd`; the first `maxLines` only, if given (then `consumed` ends after the last).
 */
export function splitLines(bytes: Uint8Array, at: number, partialEnd: boolean, maxLines = Infinity): { items: LineItem[]; consumed: number } {
  const items: LineItem[] = [];
  let from = 0;
  for (let nl = bytes.indexOf(10); nl !== -1 && items.length < maxLines; nl = bytes.indexOf(10, from)) {
    items.push(lineItem(bytes.subarray(from, nl + 1), at + from));
    from = nl + 1;
  }
  if (items.length >= maxLines) return { items, consumed: from };
  if (partialEnd && from < bytes.byteLength) {
    items.push(lineItem(bytes.subarray(from), at + from));
    from = bytes.byteLength;
  }
  return { items, consumed: from };
}

/** Newlines in bytes [start, end) of a source, read in chunks; null if unreadable. */
export function countLines(source: ByteSource, start: number, end: number): number | null {
  let n = 0;
  for (let pos = start; pos < end; ) {
    const zeros = source.zeroRunEnd?.(pos) ?? pos;
    if (zeros > pos) {
      pos = Math.min(end, zeros); // no newline in there
      continue;
    }
    const chunk = readChunk(source, pos, Math.min(end, pos + CHUNK));
    if (!chunk) return null;
    n += newlines(chunk, 0, chunk.byteLength);
    pos += chunk.byteLength;
  }
  return n;
}

/**
 * One reused buffer for passes over a whole stream (a flood's middle, its line count):
 * a fresh one per chunk left 200 MB of buffers behind a 200 MB flood for the collector,
 * which pushed the server's peak memory up by ~30 MiB. Shaping is synchronous, so one is
 * enough; what a pass keeps of a chunk it must copy.
 */
let scratch: Uint8Array | null = null;

/** Bytes [start, end) (at most CHUNK) in the reused buffer when the source can fill it, else freshly read; null if unreadable. */
export function readChunk(source: ByteSource, start: number, end: number): Uint8Array | null {
  if (!source.readInto) return source.read(start, end);
  scratch ??= new Uint8Array(CHUNK);
  const n = source.readInto(start, scratch.subarray(0, end - start));
  return n === end - start ? scratch.subarray(0, n) : null;
}

export function newlines(bytes: Uint8Array, from: number, to: number): number {
  // Bun's vectorized search first: a range without a newline (binary output, zeros) is
  // passed over at memory speed. Past the first one, bytes are counted four at a time: the
  // cost no longer grows with the number of lines (200 MB of 6-byte lines: 55 ms, where a
  // search per newline took 500).
  const first = Bun.indexOfLine(bytes, from);
  if (first === -1 || first >= to) return 0;
  return 1 + countByte10(bytes, first + 1, to);
}

/** Newline bytes in [from, to): SWAR over 32-bit words (exact: no carry crosses a byte). */
function countByte10(bytes: Uint8Array, from: number, to: number): number {
  let n = 0;
  let i = from;
  // Up to a 4-byte boundary of the underlying buffer, byte by byte.
  for (; i < to && (bytes.byteOffset + i) & 3; i++) if (bytes[i] === 10) n++;
  const words = (to - i) >> 2;
  const u = words > 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset + i, words) : new Uint32Array(0);
  for (let k = 0; k < words; k++) {
    const y = u[k]! ^ 0x0a0a0a0a; // newline bytes become 0
    const nonZero = (((y & 0x7f7f7f7f) + 0x7f7f7f7f) | y) >>> 0; // high bit set in each non-zero byte
    const zeros = ~nonZero & 0x80808080;
    if (zeros !== 0) n += Math.imul(zeros >>> 7, 0x01010101) >>> 24;
  }
  for (i += words << 2; i < to; i++) if (bytes[i] === 10) n++;
  return n;
}

export const CHUNK = 1 << 20;
