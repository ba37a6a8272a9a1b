import type { Item } from "./items.ts";

/** What one marker line costs in the budget (its typical length): many small gaps cost more than one. */
export const MARKER_COST = 64;
/** Error lines (with context) may take this share of the budget before the tail and head get theirs. */
const ERROR_SHARE = 0.5;
const CONTEXT = 2;
const TAIL_LINES = 40;
const HEAD_LINES = 20;

/**
 * Chooses which lines of each stream a result keeps, all streams sharing one budget
 * (SPEC §15): error and failure lines with 2 lines of context, then the last 40 lines, the
 * first 20, warnings, then the rest from both ends. Each stream's lines are taken in turn
 * so that neither starves the other. Every run of left-out items becomes one marker line,
 * and markers are paid for from the budget too, so a result stays small however scattered.
 */
export function selectLines(streams: Item[][], budget: number): boolean[][] {
  const kept = streams.map((items) => items.map(() => false));
  let used = 0;
  let markers = streams.reduce((n, items) => n + (items.length > 0 ? 1 : 0), 0);

  const keep = (s: number, i: number, cap = budget): boolean => {
    const items = streams[s]!;
    const item = items[i];
    if (!item || item.kind !== "line") return false;
    const k = kept[s]!;
    if (k[i]) return true;
    const prev = i === 0 || k[i - 1]!;
    const next = i === items.length - 1 || k[i + 1]!;
    const delta = !prev && !next ? 1 : prev && next ? -1 : 0;
    if (used + item.bytes + MARKER_COST * (markers + delta) > cap) return false;
    k[i] = true;
    used += item.bytes;
    markers += delta;
    return true;
  };

  const errors = streams.map((items) => items.flatMap((it, i) => (it.kind === "line" && it.reports === "error" ? [i] : [])));
  const keepErrorBlocks = (cap: number) =>
    roundRobin(errors, (s, i) => {
      if (!keep(s, i, cap)) return;
      for (let d = 1; d <= CONTEXT; d++) {
        for (const j of [i - d, i + d]) {
          // Context stays on its side of a gap: a line across it is not next to this one.
          const between = j < i ? streams[s]!.slice(j, i) : streams[s]!.slice(i + 1, j + 1);
          if (between.every((it) => it.kind === "line")) keep(s, j, cap);
        }
      }
    });

  keepErrorBlocks(budget * ERROR_SHARE);
  for (const [limit, fromEnd] of [[TAIL_LINES, true], [HEAD_LINES, false]] as const) {
    const order = streams.map((items) => lineIndexes(items, fromEnd).slice(0, limit));
    eachInTurnUntilFull(order, keep);
  }
  roundRobin(streams.map((items) => items.flatMap((it, i) => (it.kind === "line" && it.reports === "warning" ? [i] : []))), (s, i) => void keep(s, i));
  keepErrorBlocks(budget);
  // The rest from both ends, alternately; an end stops at the first line that does not fit.
  const ends = streams.flatMap((items) => [lineIndexes(items, true), lineIndexes(items, false)]);
  eachInTurnUntilFull(ends, (e, i) => keep(e >> 1, i));
  return kept;
}

function lineIndexes(items: Item[], fromEnd: boolean): number[] {
  const idx: number[] = [];
  items.forEach((it, i) => {
    if (it.kind === "line") idx.push(i);
  });
  return fromEnd ? idx.reverse() : idx;
}

/** Calls fn on the lists' entries in turn: first of each list, second of each, … */
function roundRobin(lists: number[][], fn: (list: number, entry: number) => void): void {
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let k = 0; k < longest; k++) lists.forEach((l, s) => k < l.length && fn(s, l[k]!));
}

/** Like roundRobin, but a list stops at its first entry `keep` refuses (already kept ones pass). */
function eachInTurnUntilFull(lists: number[][], keep: (list: number, entry: number) => boolean): void {
  const pos = lists.map(() => 0);
  const open = lists.map((l) => l.length > 0);
  while (open.some(Boolean)) {
    lists.forEach((l, s) => {
      if (!open[s]) return;
      if (!keep(s, l[pos[s]!]!) || ++pos[s]! >= l.length) open[s] = false;
    });
  }
}
