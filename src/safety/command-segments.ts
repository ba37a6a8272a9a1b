/**
 * Splits a shell command line at every place a command word can stand: the start of a
 * line and after `;`, `&`, `|` (so also `&&`, `||`), `(`, `{`, a backtick or `$(`.
 * `{` opens a group only as a word of its own (`{ rm x; }`), not in `${HOME}` or `xargs -I {}`.
 * Quotes are deliberately not interpreted (`echo 'a; rm x'` yields a segment `rm x'`):
 * erring towards asking is the safe side, and it keeps the split one linear pass.
 */
const SEPARATORS = new Set(["\n", ";", "&", "|", "(", "`"]);

/** The text after each command position, in order (each may be empty or start with spaces). */
export function commandSegments(command: string): string[] {
  const segments: string[] = [];
  let start = 0;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (SEPARATORS.has(c) || (c === "{" && isBlank(command[i + 1]))) {
      segments.push(command.slice(start, i));
      start = i + 1;
    }
  }
  segments.push(command.slice(start));
  return segments;
}

function isBlank(c: string | undefined): boolean {
  return c === undefined || c === " " || c === "\t" || c === "\n";
}
