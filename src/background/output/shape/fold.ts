import type { Item, LineItem } from "./items.ts";

/** Runs at least this long fold to first line, marker, last line. */
const MIN_RUN = 4;

/**
 * The key two lines must share to be "the same line again": digits, hex ids and durations
 * masked, bar characters and spacing collapsed (progress counters, timestamps, spinners).
 */
export function similarityKey(text: string): string {
  return text
    .replace(/\b(?:0x)?[0-9a-f]*\d[0-9a-f]*\b/gi, "#")
    .replace(/\d+/g, "#")
    .replace(/([=#*.\-_>|█▉▊▋▌▍▎▏░▒▓■□▪●○⠁-⣿])\1+/gu, "$1")
    .replace(/\s+/g, " ");
}

/** Lines this close to an error line are its context: never folded away. */
const CONTEXT = 2;

/** Blocks of up to this many lines repeated (a test runner's per-test record) fold like repeated lines. */
const MAX_PERIOD = 8;

/**
 * Folds every run of MIN_RUN or more similar consecutive lines into first line, one gap,
 * last line, and every run of MIN_RUN or more similar consecutive blocks of lines into
 * first block, one gap, last block. The unread middle of a flood does not break a run of
 * lines when the lines on both sides of it are similar; an error line and its context do
 * (they are kept first).
 */
export function foldRepeats(items: Item[]): Item[] {
  const guarded = contextOfErrors(items);
  const keys = items.map((it, i) => (it.kind === "line" && !guarded[i] ? similarityKey(it.text) : null));
  const out: Item[] = [];
  let i = 0;
  while (i < items.length) {
    const key = keys[i];
    if (key === null || key === undefined) {
      out.push(items[i++]!);
      continue;
    }
    // Extend the run over similar lines, and over middles of floods followed by a similar line.
    let j = i + 1;
    let lines = 1;
    let last = i;
    while (j < items.length) {
      const it = items[j]!;
      if (keys[j] === key) {
        lines++;
        last = j;
      } else if (it.kind === "gap" && !it.similar && it.lines !== null && keys[j + 1] === key) {
        lines += it.lines;
      } else break;
      j++;
    }
    if (lines >= MIN_RUN) {
      const first = items[i]!;
      const end = items[last]!;
      out.push(first, { kind: "gap", start: first.end, end: end.start, lines: lines - 2, similar: true }, end);
      i = last + 1;
      continue;
    }
    const block = repeatedBlock(keys, i);
    if (block) {
      const { period, count } = block;
      const lastBlock = i + (count - 1) * period;
      out.push(...items.slice(i, i + period));
      out.push({ kind: "gap", start: items[i + period]!.start, end: items[lastBlock]!.start, lines: (count - 2) * period, similar: true });
      out.push(...items.slice(lastBlock, lastBlock + period));
      i = lastBlock + period;
      continue;
    }
    for (let k = i; k <= last; k++) out.push(items[k]!);
    i = last + 1;
  }
  return out;
}

/** The shortest block of 2–MAX_PERIOD lines starting at `i` that repeats MIN_RUN times or more, similar line for line. */
function repeatedBlock(keys: Array<string | null>, i: number): { period: number; count: number } | null {
  for (let period = 2; period <= MAX_PERIOD; period++) {
    let same = 0;
    while (keys[i + same] != null && keys[i + same] === keys[i + same + period]) same++;
    const count = Math.floor((same + period) / period);
    if (count >= MIN_RUN) return { period, count };
  }
  return null;
}

/** Which items are error lines or within CONTEXT lines of one (not across a gap). */
function contextOfErrors(items: Item[]): boolean[] {
  const guarded = items.map(() => false);
  items.forEach((it, i) => {
    if (it.kind !== "line" || it.reports !== "error") return;
    guarded[i] = true;
    for (const dir of [-1, 1]) {
      for (let d = 1; d <= CONTEXT && items[i + dir * d]?.kind === "line"; d++) guarded[i + dir * d] = true;
    }
  });
  return guarded;
}
