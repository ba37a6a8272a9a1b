import { CUT_KEEP, type Item, type LineItem, LONG_LINE } from "./items.ts";
import { MARKER_COST } from "./select.ts";

/**
 * Long lines (SPEC §15): while other lines compete for the budget, a line longer than
 * LONG_LINE costs only its first and last CUT_KEEP bytes (less under a budget too small for
 * that, so that it still shows its start and end); once the lines are chosen, the budget
 * left over goes to the kept long lines' heads and tails.
 */

/** Bytes a long line shows at each end while lines are chosen: a quarter of the budget at most. */
export function baseKeep(budget: number): number {
  return Math.max(1, Math.min(CUT_KEEP, Math.floor(budget / 4)));
}

/** A line shown whole. */
export function withoutCut(item: Item): Item {
  return item.kind === "line" && item.long ? { ...item, long: undefined } : item; // (a line known by its ends is never whole here: it is over two windows long)
}

/** A line longer than LONG_LINE (as shown) costs only what is kept of it. */
export function cutCost(item: Item, keep: number): Item {
  if (item.kind !== "line" || (!item.long && !item.ends)) return item;
  if (item.control && item.bytes <= LONG_LINE + 1) return withoutCut(item);
  return { ...item, keep, bytes: 2 * keep + MARKER_COST + (item.newline ? 1 : 0) };
}

/** Gives what the chosen lines and markers leave of `budget` to the kept long lines, evenly, each up to its length. */
export function widenLongLines(streams: Item[][], kept: boolean[][], budget: number): Item[][] {
  let left = budget;
  const long: Array<[number, number]> = [];
  streams.forEach((items, s) => {
    items.forEach((it, i) => {
      if (!kept[s]![i]) {
        if (i === 0 || kept[s]![i - 1]) left -= MARKER_COST; // one marker for each run left out
        return;
      }
      if (it.kind !== "line") return;
      left -= it.bytes;
      if (it.keep !== undefined) long.push([s, i]);
    });
  });
  const out = streams.map((items) => items.slice());
  let open = long.filter(([s, i]) => room(out[s]![i] as LineItem) > 0);
  while (left > 1 && open.length > 0) {
    const share = Math.max(1, Math.floor(left / open.length / 2));
    for (const [s, i] of open) {
      const item = out[s]![i] as LineItem;
      const more = Math.min(share, room(item), Math.floor(left / 2));
      if (more <= 0) continue;
      out[s]![i] = { ...item, keep: item.keep! + more };
      left -= 2 * more;
    }
    open = open.filter(([s, i]) => room(out[s]![i] as LineItem) > 0);
  }
  return out;
}

/** Bytes a cut line could still show at each end. */
function room(item: LineItem): number {
  const length = item.ends ? Math.min(item.ends.head.byteLength, item.ends.tail.byteLength) : item.control ? Buffer.byteLength(item.text) / 2 : item.long!.byteLength / 2;
  return Math.floor(length) - item.keep!;
}
