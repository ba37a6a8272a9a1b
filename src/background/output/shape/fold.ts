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

/**
 * Folds every run of MIN_RUN or more similar consecutive lines into first line, one gap,
 * last line. The unread middle of a flood does not break a run when the lines on both
 * sides of it are similar; an error line and its context do (they are kept first).
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
    } else {
      for (let k = i; k <= last; k++) out.push(items[k]!);
    }
    i = last + 1;
  }
  return out;
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
