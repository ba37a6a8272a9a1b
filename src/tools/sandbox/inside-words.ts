import { needsParser } from "../../safety/parser/bash-parser.ts";
import { readLine } from "../../safety/parser/command-line.ts";
import { commandViews, said } from "../../safety/parser/command-word.ts";

/**
 * Commands that cannot work inside the sandbox, known by their command word (wrappers and
 * assignments stepped over, as the safety rules see them): privilege changers, and
 * agent-shell's own verbs that start or reach its daemon (SPEC §25).
 */

/** Nothing gains privileges inside: no setuid, no capabilities. */
const PRIVILEGED = new Set(["sudo", "su", "doas", "pkexec", "run0"]);

/** agent-shell verbs that start or talk to a daemon (`run` stays inside the sandbox). */
const DAEMON_VERBS = new Set(["up", "down", "start", "restart", "call", "daemon", "ps", "logs", "wait", "kill"]);

/**
 * Each view of each simple command the line runs (the bash parser's reading). These words
 * explain a refusal, they do not enforce one (the sandbox does): before the grammar has
 * loaded (the call's guard loads it for any line that needs it), nothing is found.
 */
function views(command: string): { word: string; args: string }[] {
  if (needsParser(command)) return [];
  const out: { word: string; args: string }[] = [];
  for (const c of readLine(command).commands) {
    for (const v of commandViews(c.words).views) out.push({ word: v.word, args: v.args.map(said).join(" ") });
  }
  return out;
}

/** The first privilege-changing command word (`sudo`, `su`…) the command runs, or null. */
export function privilegedWord(command: string): string | null {
  if (!/\b(?:sudo|su|doas|pkexec|run0)\b/.test(command)) return null; // most commands: no split at all
  return views(command).find((v) => PRIVILEGED.has(v.word))?.word ?? null;
}

/** `agent-shell <verb>` for a verb that needs the daemon, or null. */
export function daemonVerb(command: string): string | null {
  if (!command.includes("agent-shell")) return null;
  for (const v of views(command)) {
    if (v.word !== "agent-shell") continue;
    const verb = /^\s*(\S+)/.exec(v.args)?.[1];
    if (verb && DAEMON_VERBS.has(verb)) return `agent-shell ${verb}`;
  }
  return null;
}
