import { testLine } from "./lines.ts";
import { OutputBuffer } from "./buffer.ts";
import { decode } from "./decode.ts";
import type { OutputStream } from "./stream.ts";

const SCAN_CHUNK = 1 << 20;

/** What a view reads: an output stream, or the rendered text of a tty task. */
export type ByteSource = Pick<OutputStream, "total" | "read">;

export interface View {
  text: string;
  truncated: boolean;
}

export interface ViewOptions {
  /** Byte range of the stream to show. */
  start: number;
  end: number;
  /** Head + tail truncation beyond this many bytes. */
  maxBytes: number;
  /** Keep only the last N lines. */
  tailLines?: number;
  /** Keep only lines matching this regex. */
  filter?: RegExp;
}

/** The marker line between head and tail of truncated output. */
export function truncationMarker(totalBytes: number): string {
  return `[... truncated, ${totalBytes} bytes total ...]`;
}

/** Shape a byte range of a stream for a result: filter, tail_lines, head+tail truncation. */
export function renderView(stream: ByteSource, opts: ViewOptions): View {
  const end = Math.min(opts.end, stream.total);
  let start = Math.max(0, Math.min(opts.start, end));
  if (opts.filter) {
    const matched = new OutputBuffer(opts.maxBytes * 2 + 2);
    forEachLine(stream, start, end, (line) => {
      // Test on the text without its newline so `$` anchors work.
      const text = decode(line[line.length - 1] === 10 ? line.subarray(0, -1) : line);
      if (testLine(opts.filter!, text)) matched.append(line);
    });
    const held = matched.held();
    let bytes = concat(held.head, held.tail);
    if (opts.tailLines !== undefined) bytes = bytes.subarray(lastLinesStart(bytes, opts.tailLines));
    return truncateBytes(bytes, opts.maxBytes, matched.complete ? bytes.byteLength : matched.total);
  }
  if (opts.tailLines !== undefined) start = startOfLastLines(stream, start, end, opts.tailLines);
  return renderRange(stream, start, end, opts.maxBytes);
}

/** Bytes [start, end) as text; head and tail around a marker line when longer than maxBytes. */
export function renderRange(stream: ByteSource, start: number, end: number, maxBytes: number): View {
  const length = end - start;
  if (length <= maxBytes) {
    const bytes = stream.read(start, end);
    if (bytes) return { text: decode(bytes), truncated: false };
  }
  const headLen = Math.floor(Math.min(maxBytes, length) / 2);
  const tailLen = Math.min(maxBytes, length) - headLen;
  // Read a few bytes more on each side so cuts can move to character boundaries.
  const head = stream.read(start, Math.min(end, start + headLen + 3)) ?? new Uint8Array(0);
  const tail = stream.read(Math.max(start, end - tailLen - 3), end) ?? new Uint8Array(0);
  return joinHeadTail(head.subarray(0, charBoundaryBefore(head, headLen)), tail.subarray(charBoundaryAfter(tail, tail.byteLength - tailLen)), length);
}

/** Head + tail truncation of bytes already in hand. */
export function truncateBytes(bytes: Uint8Array, maxBytes: number, totalBytes = bytes.byteLength): View {
  if (bytes.byteLength <= maxBytes && totalBytes === bytes.byteLength) return { text: decode(bytes), truncated: false };
  const headLen = Math.floor(Math.min(maxBytes, bytes.byteLength) / 2);
  const tailLen = Math.min(maxBytes, bytes.byteLength) - headLen;
  const head = bytes.subarray(0, charBoundaryBefore(bytes, headLen));
  const tail = bytes.subarray(charBoundaryAfter(bytes, bytes.byteLength - tailLen));
  return joinHeadTail(head, tail, totalBytes);
}

function joinHeadTail(head: Uint8Array, tail: Uint8Array, totalBytes: number): View {
  const headText = decode(head);
  const sep = headText === "" || headText.endsWith("\n") ? "" : "\n";
  return { text: `${headText}${sep}${truncationMarker(totalBytes)}\n${decode(tail)}`, truncated: true };
}

/** Largest cut ≤ `at` that does not split a UTF-8 character. */
function charBoundaryBefore(bytes: Uint8Array, at: number): number {
  let cut = Math.min(at, bytes.byteLength);
  for (let i = 0; i < 3 && cut > 0 && cut < bytes.byteLength && (bytes[cut]! & 0xc0) === 0x80; i++) cut--;
  return cut;
}

/** Smallest start ≥ `at` that does not begin inside a UTF-8 character. */
function charBoundaryAfter(bytes: Uint8Array, at: number): number {
  let cut = Math.max(0, at);
  for (let i = 0; i < 3 && cut < bytes.byteLength && (bytes[cut]! & 0xc0) === 0x80; i++) cut++;
  return cut;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (b.byteLength === 0) return a;
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

/** Calls `fn` with each line (newline included) of bytes [start, end), reading in chunks. */
function forEachLine(stream: ByteSource, start: number, end: number, fn: (line: Uint8Array) => void): void {
  let carry = new Uint8Array(0);
  for (let pos = start; pos < end; pos += SCAN_CHUNK) {
    const chunk = stream.read(pos, Math.min(end, pos + SCAN_CHUNK));
    if (!chunk) continue; // bytes neither in memory nor spooled: skip them
    let data = concat(carry, chunk);
    let from = 0;
    for (let nl = data.indexOf(10, from); nl !== -1; nl = data.indexOf(10, from)) {
      fn(data.subarray(from, nl + 1));
      from = nl + 1;
    }
    carry = data.slice(from);
  }
  if (carry.byteLength) fn(carry);
}

/** Offset within `bytes` where its last `n` lines begin (a trailing newline ends a line). */
function lastLinesStart(bytes: Uint8Array, n: number): number {
  return startOfLastLines({ total: bytes.byteLength, read: (s, e) => bytes.subarray(s, e) }, 0, bytes.byteLength, n);
}

/** Stream offset where the last `n` lines of [start, end) begin, scanning backwards. */
function startOfLastLines(stream: ByteSource, start: number, end: number, n: number): number {
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
