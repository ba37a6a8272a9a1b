/**
 * The one line that stands for what a result leaves out (SPEC §15): it starts with `[…`,
 * names the lines and the raw byte range [A, B) of the stream (so `task_output` with
 * offset A and length B-A returns exactly those bytes), and, like every truncation line
 * (SPEC §3.1), says `truncated` and the stream's total in plain digits.
 */
export function omissionMarker(o: { lines: number | null; start: number; end: number; total: number; similar?: boolean; partOfLine?: boolean }): string {
  const what =
    o.partOfLine === true
      ? "part of 1 line"
      : o.lines === null
        ? "unreadable lines"
        : `${o.lines} ${o.similar ? "similar " : ""}line${o.lines === 1 ? "" : "s"}`;
  return `[… ${what} truncated (bytes ${o.start}-${o.end} of ${o.total} total) …]`;
}

