import { CUT_KEEP, type Item, type LineItem } from "./items.ts";
import { omissionMarker } from "./marker.ts";
import { renderLine } from "./terminal-control.ts";

export interface ShapedText {
  text: string;
  /** Something was left out (a marker stands for it). */
  truncated: boolean;
}

/** The text of one stream: kept lines as shown, every run of left-out items as one marker line. */
export function emitStream(items: Item[], kept: boolean[], total: number): ShapedText {
  const parts: string[] = [];
  let truncated = false;
  const newlineBefore = () => {
    const last = parts[parts.length - 1];
    if (last !== undefined && !last.endsWith("\n")) parts.push("\n");
  };
  let i = 0;
  while (i < items.length) {
    const item = items[i]!;
    if (item.kind === "line" && kept[i]) {
      parts.push(item.ends ? cutEnds(item, total) : item.long ? cutLine(item, total) : item.text + (item.newline ? "\n" : ""));
      if (item.long || item.ends) truncated = true;
      i++;
      continue;
    }
    let j = i;
    let lines: number | null = 0;
    while (j < items.length && !(items[j]!.kind === "line" && kept[j])) {
      const it = items[j]!;
      lines = lines === null ? null : it.kind === "line" ? lines + 1 : it.lines === null ? null : lines + it.lines;
      j++;
    }
    const similar = j - i === 1 && item.kind === "gap" && item.similar;
    newlineBefore();
    parts.push(omissionMarker({ lines, start: item.start, end: items[j - 1]!.end, total, similar }) + "\n");
    truncated = true;
    i = j;
  }
  return { text: parts.join(""), truncated };
}

/** A long line: its first and last `keep` bytes around a marker for the middle (never inside a character). */
function cutLine(item: LineItem, total: number): string {
  const raw = item.long!;
  const keep = item.keep ?? CUT_KEEP;
  const end = item.newline ? "\n" : "";
  if (item.control) {
    // Rendered text has no byte mapping to the raw line: the marker names the whole raw line.
    const shown = Buffer.from(item.text);
    if (shown.byteLength <= 2 * keep) return item.text + end;
    const head = shown.subarray(0, boundaryBefore(shown, keep)).toString();
    const tail = shown.subarray(boundaryAfter(shown, shown.byteLength - keep)).toString();
    return `${head}\n${omissionMarker({ lines: 1, start: item.start, end: item.end, total, partOfLine: true })}\n${tail}${end}`;
  }
  const a = boundaryBefore(raw, keep);
  const b = boundaryAfter(raw, raw.byteLength - keep);
  if (a >= b) return decoder.decode(raw) + end;
  return `${decoder.decode(raw.subarray(0, a))}\n${omissionMarker({ lines: 1, start: item.start + a, end: item.start + b, total, partOfLine: true })}\n${decoder.decode(raw.subarray(b))}${end}`;
}

/** A line known only by its ends: the first and last `keep` bytes around a marker for the rest. */
function cutEnds(item: LineItem, total: number): string {
  const { head, tail } = item.ends!;
  const keep = Math.min(item.keep ?? CUT_KEEP, head.byteLength, tail.byteLength);
  const a = boundaryBefore(head, keep);
  const b = boundaryAfter(tail, tail.byteLength - keep);
  const tailAt = item.end - (item.newline ? 1 : 0) - tail.byteLength;
  const show = (bytes: Uint8Array) => (item.control ? renderLine(decoder.decode(bytes)) : decoder.decode(bytes));
  return `${show(head.subarray(0, a))}\n${omissionMarker({ lines: 1, start: item.start + a, end: tailAt + b, total, partOfLine: true })}\n${show(tail.subarray(b))}${item.newline ? "\n" : ""}`;
}

const decoder = new TextDecoder();

/** Largest cut ≤ at that does not split a UTF-8 character. */
export function boundaryBefore(bytes: Uint8Array, at: number): number {
  let cut = Math.min(at, bytes.byteLength);
  for (let i = 0; i < 3 && cut > 0 && cut < bytes.byteLength && (bytes[cut]! & 0xc0) === 0x80; i++) cut--;
  return cut;
}

/** Smallest cut ≥ at that does not split a UTF-8 character. */
export function boundaryAfter(bytes: Uint8Array, at: number): number {
  let cut = Math.max(0, at);
  for (let i = 0; i < 3 && cut < bytes.byteLength && (bytes[cut]! & 0xc0) === 0x80; i++) cut++;
  return cut;
}
