import { decode } from "../decode.ts";
import { testLine } from "../lines.ts";
import { type ByteSource, CHUNK, type GapItem, type Item, type LineItem, lineItem } from "./items.ts";

/**
 * The lines of bytes [start, end) that match `filter`, as items. Memory stays bounded
 * whatever matches: the first and the last `window` bytes of matching lines are kept,
 * the matches between them become one gap (its range also spans the lines that did not
 * match, so reading it returns them too).
 */
export function filteredItems(source: ByteSource, start: number, end: number, filter: RegExp, window: number): Item[] {
  const head: LineItem[] = [];
  let headBytes = 0;
  const tail: LineItem[] = [];
  let tailBytes = 0;
  let gap: GapItem | null = null;
  const take = (bytes: Uint8Array, at: number) => {
    const text = decode(bytes[bytes.byteLength - 1] === 10 ? bytes.subarray(0, -1) : bytes);
    if (!testLine(filter, text)) return;
    const item = lineItem(bytes, at);
    if (headBytes < window) {
      head.push(item);
      headBytes += item.bytes;
      return;
    }
    tail.push(item);
    tailBytes += item.bytes;
    while (tailBytes > window && tail.length > 1) {
      const dropped = tail.shift()!;
      tailBytes -= dropped.bytes;
      if (gap) {
        gap.end = dropped.end;
        gap.lines!++;
      } else gap = { kind: "gap", start: dropped.start, end: dropped.end, lines: 1, similar: false };
    }
  };
  let carry = new Uint8Array(0);
  let carryAt = start;
  for (let pos = start; pos < end; pos += CHUNK) {
    const chunk = source.read(pos, Math.min(end, pos + CHUNK));
    if (!chunk) {
      carry = new Uint8Array(0);
      carryAt = Math.min(end, pos + CHUNK);
      continue; // bytes neither in memory nor spooled: skipped
    }
    const data = carry.byteLength ? concat(carry, chunk) : chunk;
    let from = 0;
    for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, from)) {
      take(data.subarray(from, nl + 1), carryAt + from);
      from = nl + 1;
    }
    carry = data.slice(from);
    carryAt += from;
  }
  if (carry.byteLength) take(carry, carryAt);
  return [...head, ...(gap ? [gap] : []), ...tail];
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}
