/**
 * What one simple command really runs: wrapper commands (`env`, `nice`, `nohup`, `timeout`,
 * `time`, `xargs`, `command`, `sudo`…) are stepped over, and the command word is normalized
 * the way the shell would find it (`/usr/bin/rm` runs `rm`; quotes and backslashes were
 * removed by the parser). Each step yields a view `word + arguments` that the §6 table and
 * the user's rules are matched against.
 */
import type { Word } from "./bash-parser.ts";

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
/** Wrappers that take one positional argument before the command (`timeout 5 rm`). */
const POSITIONAL_BEFORE_COMMAND = new Set(["timeout", "chrt", "taskset"]);

/** Beyond this many wrappers the command word is not worked out: the caller asks instead. */
export const MAX_WRAPPERS = 8;

/** One step: the normalized command word and the words after it. */
export type View = { word: string; args: Word[] };

export type CommandViews = {
  /** From the command as written to the command it finally runs (the last). */
  views: View[];
  /** More wrappers than MAX_WRAPPERS: the real command word was not reached. */
  tooDeep: boolean;
};

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** What a word says, as the shell would see it when its value is known. */
export const said = (w: Word): string => w.value ?? w.text;

/** The word as the shell would look it up: the directory dropped. */
export function normalizeWord(word: string): string {
  return word.startsWith("/") ? word.slice(word.lastIndexOf("/") + 1) : word;
}

/** Every view of one simple command, from the command as written to the command it finally runs. */
export function commandViews(words: Word[]): CommandViews {
  const views: View[] = [];
  let at = 0;
  for (let depth = 0; at < words.length; depth++) {
    const word = normalizeWord(said(words[at]!));
    views.push({ word, args: words.slice(at + 1) });
    if (!WRAPPERS.has(word)) break;
    if (depth >= MAX_WRAPPERS) return { views, tooDeep: true };
    const next = skipWrapperArguments(word, words, at + 1);
    if (next === null) break;
    at = next;
  }
  return { views, tooDeep: false };
}

/** Index of the wrapped command word, or null when this use of the wrapper runs none. */
function skipWrapperArguments(wrapper: string, words: Word[], at: number): number | null {
  const withValue = WRAPPER_OPTIONS_WITH_VALUE[wrapper];
  let positional = POSITIONAL_BEFORE_COMMAND.has(wrapper);
  for (; at < words.length; at++) {
    const w = said(words[at]!);
    if (wrapper === "command" && (w === "-v" || w === "-V")) return null; // a lookup, runs nothing
    if (w === "--") return at + 1 < words.length ? at + 1 : null;
    if (w.startsWith("-") && w.length > 1) {
      if (withValue?.has(w)) at++;
      continue;
    }
    if (wrapper === "env" && ASSIGNMENT.test(w)) continue;
    if (positional) {
      positional = false;
      continue;
    }
    return at;
  }
  return null;
}
