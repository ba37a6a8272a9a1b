import { decode } from "../decode.ts";
import { boundaryAfter, boundaryBefore } from "./emit.ts";
import type { ShapedText } from "./emit.ts";
import { type ByteSource, countLines } from "./items.ts";
import { omissionMarker } from "./marker.ts";

/**
 * The plain view (`output: "raw"`, `output_shaping = false`): bytes [start, end) as they
 * are, or, beyond `budget`, the head and the tail around one marker line naming the
 * omitted byte range. No rendering, folding or selection.
 */
export function headTail(source: ByteSource, start: number, end: number, budget: number): ShapedText {
  const length = end - start;
  if (length <= budget) {
    const bytes = source.read(start, end);
    if (bytes) return { text: decode(bytes), truncated: false };
  }
  const keep = Math.max(0, Math.min(budget - 1, length)); // one byte for the line break a mid-line cut adds before the marker
  const headLen = Math.floor(keep / 2);
  const tailLen = keep - headLen;
  // A few bytes more on each side, so the cuts can move to character boundaries.
  const head = source.read(start, Math.min(end, start + headLen + 3)) ?? new Uint8Array(0);
  const tail = source.read(Math.max(start, end - tailLen - 3), end) ?? new Uint8Array(0);
  const a = boundaryBefore(head, Math.min(headLen, head.byteLength));
  const tailStart = end - tail.byteLength;
  const b = tailStart + boundaryAfter(tail, tail.byteLength - tailLen);
  const headText = decode(head.subarray(0, a));
  const sep = headText === "" || headText.endsWith("\n") ? "" : "\n";
  const omitted = { lines: countLines(source, start + a, b), start: start + a, end: b, total: source.total };
  return { text: `${headText}${sep}${omissionMarker(omitted)}\n${decode(tail.subarray(b - tailStart))}`, truncated: true };
}

/**
 * Shares one budget between streams: a stream that needs less than its even share leaves
 * the rest to the others.
 */
export function shareBudget(lengths: number[], budget: number): number[] {
  const shares = lengths.map(() => 0);
  let left = budget;
  let open = lengths.map((_, i) => i);
  while (open.length && left > 0) {
    const even = Math.floor(left / open.length);
    const small = open.filter((i) => lengths[i]! - shares[i]! <= even);
    if (small.length === 0) {
      for (const i of open) shares[i]! += even;
      break;
    }
    for (const i of small) {
      left -= lengths[i]! - shares[i]!;
      shares[i] = lengths[i]!;
    }
    open = open.filter((i) => !small.includes(i));
  }
  return shares;
}
