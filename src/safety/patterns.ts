/**
 * Command safety classification: pure functions, table-tested.
 * A pattern applies where a command word can stand: the start of a line (after optional
 * whitespace) or after `;`, `&`, `|` (so also `&&`, `||`), `(`, `{`, a backtick or `$(`.
 * Arguments of other commands (`echo harm -rf /`) never match.
 */
const AT_COMMAND = String.raw`(?:^|[;&|({\x60]|\$\()\s*`;

/** Always refused: destroy the machine or its configuration. */
export const BLOCKED_PATTERNS: readonly RegExp[] = [
  // recursive rm of / or /* or ~ (also ~/ and ~/*)
  new RegExp(AT_COMMAND + String.raw`rm\s+(?:-[a-zA-Z]+\s+|--[a-z-]+\s+)*["']?(?:/\*?|~/?\*?)["']?(?:\s|$|;|&|\|)`, "m"),
  new RegExp(AT_COMMAND + String.raw`dd\s+.*\bif=`, "m"),
  new RegExp(AT_COMMAND + String.raw`mkfs`, "m"),
  /(?:^|[^<>&0-9])[0-9&]?>>?\|?\s*\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk)/m,
  /(?:^|[^<>&0-9])[0-9&]?>>?\|?\s*\/(?:etc|boot)\//m,
  /(?:^|[^<>&0-9])[0-9&]?>>?\|?\s*(?:~|\$HOME|\$\{HOME\})\/\.(?:bash|profile|zsh)/m,
  new RegExp(AT_COMMAND + String.raw`chmod\s+(?:-[a-zA-Z]+\s+|--[a-z-]+\s+)*0?777\s+/`, "m"),
  new RegExp(AT_COMMAND + String.raw`chown\s+(?:\S+\s+)*/`, "m"),
  /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/,
];

/** Need the caller's confirmation first. */
export const CAUTION_PATTERNS: readonly RegExp[] = [
  new RegExp(AT_COMMAND + String.raw`(?:sudo|su|rm|mv|chmod|chown|kill|pkill|killall)(?=\s|$|;|&|\|)`, "m"),
  new RegExp(
    AT_COMMAND + String.raw`(?:docker\s+(?:container\s+rm|image\s+rm|rm|rmi)|cargo\s+publish|npm\s+publish)(?=\s|$|;|&|\|)`,
    "m",
  ),
  /\bgit\s+(?:-\S+\s+)*push\b[^\n;&|]*\s(?:-[a-zA-Z]*f[a-zA-Z]*|--force(?:-with-lease)?(?:=\S*)?|\+\S+)(?=\s|$|;|&|\|)/m,
  /\bgit\s+(?:-\S+\s+)*reset\b[^\n;&|]*\s--hard(?=\s|$|;|&|\|)/m,
];

/** The pattern a command matches among the blocked ones, or null. */
export function blockedPattern(command: string): string | null {
  for (const p of BLOCKED_PATTERNS) if (p.test(command)) return p.source;
  return null;
}

export function needsCaution(command: string): boolean {
  return CAUTION_PATTERNS.some((p) => p.test(command));
}
