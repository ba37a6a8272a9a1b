import { commandSegments } from "../safety/command-segments.ts";
import { commandViews } from "../safety/command-word.ts";

/**
 * Commands that cannot work inside the sandbox, known by their command word (wrappers and
 * assignments stepped over, as the safety rules see them): privilege changers, and
 * agent-shell's own verbs that start or reach its daemon (SPEC §25).
 */

/** Nothing gains privileges inside: no setuid, no capabilities. */
const PRIVILEGED = new Set(["sudo", "su", "doas", "pkexec", "run0"]);

/** agent-shell verbs that start or talk to a daemon (`run` stays inside the sandbox). */
const DAEMON_VERBS = new Set(["up", "down", "start", "restart", "call", "daemon", "ps", "logs", "wait", "kill"]);

function views(command: string): { word: string; args: string }[] {
  const out: { word: string; args: string }[] = [];
  for (const segment of commandSegments(command)) {
    const { words, argsAt } = commandViews(segment);
    words.forEach((word, i) => out.push({ word: word.slice(word.lastIndexOf("/") + 1), args: segment.slice(argsAt[i]!) }));
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
