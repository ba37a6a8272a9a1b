/**
 * Whether the last line a program printed looks like it is asking for input. Pure and
 * deliberately conservative: it is only consulted once the program has gone quiet with
 * its stdin open, and a false "waiting" costs an agent one look, a missed one costs a hang.
 */

/** Longer lines are output, not prompts. */
const MAX_PROMPT_LENGTH = 200;

const PROMPT_PATTERNS: RegExp[] = [
  // Questions and confirmations: "Continue? [y/N]", "Overwrite (yes/no)?", "Proceed [Y/n]:"
  /[[(]\s*(y|yes)\s*\/\s*(n|no)(\s*\/\s*[^\])]*)?\s*[\])]\s*[:?]?$/i,
  /\?$/,
  // Labels waiting for a value: "Name:", "Password for ada:", "Enter passphrase (empty for no passphrase):"
  /:$/,
  // Shell and REPL prompts: "$", "#", "%", ">", ">>>", "...", "irb(main):001>", "mysql>"
  // (but not a percentage: "Downloading 100%")
  /[$#>]$/,
  /(^|[^\d])%$/,
  /^\.\.\.$/,
  // "Press Enter to continue", "Press any key"
  /\bpress (enter|return|any key)\b/i,
];

/** Credential requests without punctuation: "Password for ada", "Enter passphrase". */
const CREDENTIAL = /\b(password|passphrase|passcode|pin|token)( for \S+)?$/i;

/** `line` with trailing whitespace removed if it looks like a prompt, else null. */
export function detectPrompt(line: string): string | null {
  const text = line.replace(/\s+$/, "");
  if (text === "" || text.length > MAX_PROMPT_LENGTH) return null;
  if (CREDENTIAL.test(text)) return text;
  return PROMPT_PATTERNS.some((p) => p.test(text)) ? text : null;
}

/** Kept here for the prompt tests: the line a prompt would be on. */
export { lastLine } from "../output/tail.ts";
