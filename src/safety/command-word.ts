/**
 * What one command segment really runs: leading `NAME=value` assignments, shell keywords
 * (`then`, `do`, `!`…) and wrapper commands (`env`, `nice`, `nohup`, `timeout`, `time`,
 * `xargs`, `command`, `sudo`…) are stepped over, and the command word is normalized the
 * way the shell would find it (`\rm`, `'rm'` and `/usr/bin/rm` all run `rm`).
 * Each step yields a view `word + arguments` that the rules are matched against (built
 * by the caller only for words that have rules: most words have none).
 */

/** Wrappers whose options take a separate value (`timeout -s KILL 5 rm`). */
const WRAPPER_OPTIONS_WITH_VALUE: Record<string, ReadonlySet<string>> = {
  env: new Set(["-u", "--unset", "-C", "--chdir", "-S", "--split-string"]),
  nice: new Set(["-n", "--adjustment"]),
  ionice: new Set(["-c", "--class", "-n", "--classdata", "-p", "-t"]),
  timeout: new Set(["-s", "--signal", "-k", "--kill-after"]),
  time: new Set(["-f", "--format", "-o", "--output"]),
  xargs: new Set(["-I", "-i", "-n", "-P", "-L", "-l", "-d", "-E", "-e", "-s", "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--replace", "--eof", "--max-chars"]),
  sudo: new Set(["-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type", "-U", "--other-user", "-T", "--command-timeout"]),
  doas: new Set(["-u", "-C"]),
  stdbuf: new Set(["-i", "-o", "-e", "--input", "--output", "--error"]),
  exec: new Set(["-a"]),
};
const WRAPPERS = new Set([...Object.keys(WRAPPER_OPTIONS_WITH_VALUE), "command", "builtin", "nohup", "setsid", "chrt", "taskset", "unbuffer"]);
/** Shell keywords after which a command word follows. */
const KEYWORDS = new Set(["!", "then", "do", "else", "elif", "if", "while", "until"]);
/** Wrappers that take one positional argument before the command (`timeout 5 rm`). */
const POSITIONAL_BEFORE_COMMAND = new Set(["timeout", "chrt", "taskset"]);

/** Beyond this many wrappers the command word is not worked out: the caller asks instead. */
export const MAX_WRAPPERS = 8;

export type CommandViews = {
  /** The normalized command word after each step, the last being the command actually run. */
  words: string[];
  /** Where the arguments of each word start in the segment. */
  argsAt: number[];
  /** More wrappers than MAX_WRAPPERS: the real command word was not reached. */
  tooDeep: boolean;
};

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=\S*/;

/** The word as the shell would look it up: quotes and backslashes removed, directory dropped. */
export function normalizeWord(word: string): string {
  if (!/["'\\/]/.test(word)) return word;
  const unquoted = word.replace(/["'\\]/g, "");
  return unquoted.startsWith("/") ? unquoted.slice(unquoted.lastIndexOf("/") + 1) : unquoted;
}

function skipSpaces(s: string, at: number): number {
  while (at < s.length && (s[at] === " " || s[at] === "\t" || s[at] === "\r")) at++;
  return at;
}

function wordAt(s: string, at: number): string {
  let end = at;
  while (end < s.length && s[end] !== " " && s[end] !== "\t" && s[end] !== "\r") end++;
  return s.slice(at, end);
}

/** Every view of one segment, from the segment as written to the command it finally runs. */
export function commandViews(segment: string): CommandViews {
  const words: string[] = [];
  const argsAt: number[] = [];
  let at = skipSpaces(segment, 0);
  for (let depth = 0; ; depth++) {
    // NAME=value prefixes only set the environment of the command that follows.
    for (let w = wordAt(segment, at); ASSIGNMENT.test(w); w = wordAt(segment, at)) at = skipSpaces(segment, at + w.length);
    const raw = wordAt(segment, at);
    if (raw === "") break;
    const word = normalizeWord(raw);
    const afterWord = at + raw.length;
    words.push(word);
    argsAt.push(afterWord);
    if (!WRAPPERS.has(word) && !KEYWORDS.has(word)) break;
    if (depth >= MAX_WRAPPERS) return { words, argsAt, tooDeep: true };
    const next = skipWrapperArguments(word, segment, skipSpaces(segment, afterWord));
    if (next === null) break;
    at = next;
  }
  return { words, argsAt, tooDeep: false };
}

/** Position of the wrapped command word, or null when this use of the wrapper runs none. */
function skipWrapperArguments(wrapper: string, s: string, at: number): number | null {
  const withValue = WRAPPER_OPTIONS_WITH_VALUE[wrapper];
  let positional = POSITIONAL_BEFORE_COMMAND.has(wrapper);
  for (;;) {
    const w = wordAt(s, at);
    if (w === "") return null;
    if (wrapper === "command" && (w === "-v" || w === "-V")) return null; // a lookup, runs nothing
    if (w === "--") return skipSpaces(s, at + w.length);
    if (w.startsWith("-") && w.length > 1 && !KEYWORDS.has(wrapper)) {
      at = skipSpaces(s, at + w.length);
      if (withValue?.has(w)) at = skipSpaces(s, at + wordAt(s, at).length);
      continue;
    }
    if (wrapper === "env" && ASSIGNMENT.test(w)) {
      at = skipSpaces(s, at + w.length);
      continue;
    }
    if (positional) {
      positional = false;
      at = skipSpaces(s, at + w.length);
      continue;
    }
    return at;
  }
}
