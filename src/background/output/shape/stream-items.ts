import { decode } from "../decode.ts";
import { allZero } from "../zeros.ts";
import { lineKind } from "./line-kind.ts";
import { type ByteSource, CHUNK, type GapItem, type Item, type LineItem, LONG_LINE, lineItem, newlines, readChunk, splitLines } from "./items.ts";

/** Bytes read line by line at each end of a long stream; the middle is only scanned for errors. */
export const MIN_WINDOW = 256 * 1024;
/** Error lines (with their context) taken from the middle of a flood, at most. */
const MAX_MIDDLE_ERRORS = 200;
const CONTEXT = 2;

/**
 * The items of bytes [start, end) of a stream. Up to two windows' worth is split into
 * lines; beyond that, the first and last `window` bytes are, and the middle is read once,
 * fast, for its line count and its error lines (kept with 2 lines of context): a 200 MB
 * flood costs one pass over its spool, never 200 MB of strings. And at most `maxLines`
 * lines at each end: a result shows no more lines than its budget has bytes, and a window
 * of short lines (`yes`) would otherwise make tens of thousands of items (~20 MiB).
 */
export function streamItems(source: ByteSource, start: number, end: number, window: number, maxLines = Infinity): Item[] {
  if (end <= start) return [];
  // Under two windows it is read whole: split whole if its lines are few enough, else its ends are cut from it.
  const whole = end - start <= 2 * window ? source.read(start, end) : null;
  if (whole && newlines(whole, 0, whole.byteLength) <= 2 * maxLines) return splitLines(whole, start, true).items;
  const headEnd = Math.min(end, start + window);
  const head = whole ? whole.subarray(0, headEnd - start) : source.read(start, headEnd);
  const tailFrom = Math.max(start, end - window);
  const tail = whole ? whole.subarray(tailFrom - start) : source.read(tailFrom, end);
  const items: Item[] = [];
  let gapStart = start;
  if (head) {
    const { items: lines, consumed } = splitLines(head, start, false, maxLines);
    items.push(...lines);
    gapStart = start + consumed;
  }
  let tailItems: Item[] = [];
  let gapEnd = end;
  if (tail) {
    // The tail's first line may have begun before the window: it belongs to the middle.
    let first = tailFrom === gapStart ? 0 : tail.indexOf(10) + 1;
    if (first > 0 || tailFrom === gapStart) {
      // Not before what the head took (a stream under two windows has them overlap), and its last maxLines lines only.
      first = startOfLastLines(tail, Math.max(first, gapStart - tailFrom), maxLines);
      gapEnd = tailFrom + first;
      tailItems = splitLines(tail.subarray(first), gapEnd, true).items;
    }
  }
  const middle = scanMiddle(source, gapStart, gapEnd);
  const only = middle[0];
  // One line longer than both windows (not one short line between capped ends): keep its ends like any long line.
  const oneLongLine = middle.length === 1 && only!.kind === "gap" && only!.lines === 1 && gapEnd >= headEnd && tailFrom >= gapStart;
  if (oneLongLine && head && tail) items.push(longLine(head.subarray(gapStart - start), tail.subarray(0, gapEnd - tailFrom), gapStart, gapEnd));
  else items.push(...middle);
  items.push(...tailItems);
  return items;
}

/** Where the last `n` lines of `bytes` begin (the last one may lack its newline), not before `from`. */
function startOfLastLines(bytes: Uint8Array, from: number, n: number): number {
  let at = bytes.byteLength;
  let search = bytes[at - 1] === 10 ? at - 2 : at - 1;
  for (let lines = 0; lines < n; lines++) {
    const nl = search >= from ? bytes.lastIndexOf(10, search) : -1;
    if (nl < from) return from;
    at = nl + 1;
    search = nl - 1;
  }
  return at;
}

/** A line [start, end) known by the bytes at its two ends (each at least CUT_KEEP long). */
function longLine(first: Uint8Array, last: Uint8Array, start: number, end: number): LineItem {
  const newline = last[last.byteLength - 1] === 10;
  const item = lineItem(first.subarray(0, LONG_LINE), start);
  return { ...item, end, newline, bytes: end - start, long: undefined, ends: { head: first, tail: newline ? last.subarray(0, -1) : last } };
}

/**
 * The middle of a long stream: gaps with their line counts, and the error lines found in
 * it with CONTEXT lines on each side (within the chunk they were found in).
 */
function scanMiddle(source: ByteSource, start: number, end: number): Item[] {
  const items: Item[] = [];
  let gap: GapItem | null = null;
  const addGap = (a: number, b: number, lines: number | null) => {
    if (b <= a) return;
    if (gap && gap.end === a) {
      gap.end = b;
      gap.lines = gap.lines === null || lines === null ? null : gap.lines + lines;
    } else items.push((gap = { kind: "gap", start: a, end: b, lines, similar: false }));
  };
  let found = 0;
  let pos = start;
  let atLineStart = true; // `start` follows the head's whole lines
  while (pos < end) {
    // NUL bytes only (known, or found in the chunk): no newline, no error; the stream's last line if it ends there.
    const known = Math.min(end, source.zeroRunEnd?.(pos) ?? pos);
    if (known > pos) {
      addGap(pos, known, known === end ? 1 : 0);
      pos = known;
      atLineStart = false;
      continue;
    }
    const chunk = readChunk(source, pos, Math.min(end, pos + CHUNK));
    if (!chunk) {
      addGap(pos, end, null);
      break;
    }
    if (allZero(chunk)) {
      addGap(pos, pos + chunk.byteLength, pos + chunk.byteLength === end ? 1 : 0);
      pos += chunk.byteLength;
      atLineStart = false;
      continue;
    }
    // Whole lines only, unless a single line fills the chunk.
    const last = chunk.lastIndexOf(10);
    const usable = pos + chunk.byteLength === end || last === -1 ? chunk.byteLength : last + 1;
    const bytes = chunk.subarray(0, usable);
    let cursor = 0;
    if (found < MAX_MIDDLE_ERRORS && pos - start < MAX_SCAN_BYTES && mayHoldErrors(bytes)) {
      for (const [a, b] of errorLineRanges(bytes, MAX_MIDDLE_ERRORS - found, atLineStart)) {
        found++;
        addGap(pos + cursor, pos + a, newlines(bytes, cursor, a));
        // A copy: the chunk's buffer is reused, and a long line's item keeps its bytes.
        const { items: lines } = splitLines(bytes.slice(a, b), pos + a, true);
        items.push(...lines);
        gap = null;
        cursor = b;
      }
    }
    addGap(pos + cursor, pos + usable, newlines(bytes, cursor, usable) + (pos + usable === end && bytes[usable - 1] !== 10 ? 1 : 0));
    pos += usable;
    atLineStart = bytes[usable - 1] === 10;
  }
  return items;
}

/**
 * A fast first pass for error words over a whole chunk (latin1: one character per byte, so
 * indexes are byte offsets): ~2 ms per MB, where the full pattern of line-kind.ts takes ~6.
 * The lines it hits are then tested with the full pattern.
 */
export const CANDIDATE = /[Ee]rror|ERR|FAIL|[Ff]ail|[Ff]atal|FATAL|[Pp]anic|PANIC|Traceback|Exception|[Aa]ssert|Expected|Received|[Ss]egmentation|[Aa]borted|not ok/g;
/**
 * A part of every word CANDIDATE matches (kept in step with it: tests/background/flood-read.test.ts
 * checks). A chunk that holds none of them holds no candidate, and is neither turned into
 * a string nor searched: 15 native searches take ~0.45 ms per MB where the string and the
 * expression take ~2.1, and a flood of plain progress lines has none of these words.
 */
export const CANDIDATE_ANCHORS = ["rror", "ERR", "AIL", "ail", "atal", "ATAL", "anic", "ANIC", "Traceback", "Exception", "ssert", "Expected", "Received", "egmentation", "borted", "not ok"];
const ANCHOR_BYTES = CANDIDATE_ANCHORS.map((a) => Buffer.from(a, "latin1"));

/** Whether `bytes` may hold a word CANDIDATE matches. */
function mayHoldErrors(bytes: Uint8Array): boolean {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return ANCHOR_BYTES.some((anchor) => view.indexOf(anchor) !== -1);
}

/** The middle of a flood is searched for errors this far (then only its lines are counted): bounds a 1 GB spool. */
const MAX_SCAN_BYTES = 256 * 1024 * 1024;

/** Byte ranges (line-aligned, merged) of error lines in `bytes` with their context lines; `atLineStart`: whether `bytes` begin a line. */
function errorLineRanges(bytes: Uint8Array, max: number, atLineStart: boolean): Array<[number, number]> {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  const ranges: Array<[number, number]> = [];
  const re = new RegExp(CANDIDATE.source, "g");
  for (let m = re.exec(text); m && ranges.length < max; m = re.exec(text)) {
    const lineStart = text.lastIndexOf("\n", m.index) + 1;
    const nl = text.indexOf("\n", m.index);
    const lineEnd = nl === -1 ? text.length : nl + 1;
    re.lastIndex = lineEnd;
    if (lineKind(decode(bytes.subarray(lineStart, lineEnd))) !== "error") continue;
    let a = lineStart;
    for (let k = 0; k < CONTEXT && a > 0; k++) {
      const before = text.lastIndexOf("\n", a - 2) + 1;
      if (before === 0 && !atLineStart) break; // the end of a line begun before these bytes: not a whole line
      a = before;
    }
    let b = lineEnd;
    for (let k = 0; k < CONTEXT && b < text.length; k++) {
      const next = text.indexOf("\n", b);
      b = next === -1 ? text.length : next + 1;
    }
    const prev = ranges[ranges.length - 1];
    if (prev && a <= prev[1]) prev[1] = Math.max(prev[1], b);
    else ranges.push([a, b]);
  }
  return ranges;
}
