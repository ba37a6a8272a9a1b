/**
 * The decision about a command line (SPEC §22): every simple command it would run
 * (command-line.ts) meets the user's rules, then the §6 table; the line takes the strictest
 * — deny > ask > allow. §6's blocked entries cannot be allowed; a caution entry is waived
 * only by an allow rule that names its command word; a command that cannot be known before
 * it runs is asked about. Pure.
 */
import { readLine } from "../parser/command-line.ts";
import { commandViews } from "../parser/command-word.ts";
import { FORK_BOMB, redirectEntry, tableEntry } from "./patterns.ts";
import { matchRule, namesWord, type Rule, ruleLabel, stricter, type Verdict, type Where } from "./rules.ts";

/** The decision about one simple command (or a redirection, or a part that cannot be known). */
export type Item = {
  command: string;
  decision: Verdict;
  /** What made it: a rule, a §6 entry, or neither. */
  by: string;
  /** In words, for the message: the §6 entry's, or the rule's reason. */
  what: string;
  rule?: Rule;
  /** The §6 caution an allow rule waived here. */
  waived?: string;
};

export type LineDecision = { decision: Verdict; items: Item[]; deciding: Item | null };

export function decideLine(line: string, rules: readonly Rule[] = [], where: Where = {}): LineDecision {
  const read = readLine(line);
  const items: Item[] = [];
  if (read.forkBomb !== null) items.push({ command: read.forkBomb, decision: "deny", by: "§6 blocked", what: FORK_BOMB });
  for (const redirect of read.redirects) {
    const entry = redirectEntry(redirect);
    if (entry) items.push({ command: redirect.text, decision: "deny", by: "§6 blocked", what: entry.what });
  }
  for (const unknown of read.unknown) items.push({ command: unknown.text, decision: "ask", by: "unknown", what: `runs commands that cannot be known before it runs: ${unknown.why}` });
  for (const command of read.commands) {
    const entry = tableEntry(command);
    const text = command.text;
    if (entry?.kind === "blocked") {
      items.push({ command: text, decision: "deny", by: "§6 blocked", what: entry.what });
      continue;
    }
    const rule = rules.length ? matchRule(rules, commandViews(command.words).views, where) : null;
    if (rule && !(rule.decision === "allow" && entry && !namesWord(rule, entry.word))) {
      const what = rule.reason ?? (rule.decision === "allow" ? "allowed by a rule" : entry?.what ?? `a rule ${rule.decision === "deny" ? "denies" : "asks about"} it`);
      items.push({ command: text, decision: rule.decision, by: ruleLabel(rule), what, rule, ...(rule.decision === "allow" && entry ? { waived: entry.what } : {}) });
    } else if (entry) items.push({ command: text, decision: "ask", by: "§6 caution", what: entry.what });
    else items.push({ command: text, decision: "allow", by: "no rule or §6 entry", what: "" });
  }
  let decision: Verdict = "allow";
  for (const item of items) decision = stricter(decision, item.decision);
  // What a person reads first: a named entry or rule says more than "cannot be known".
  const candidates = decision === "allow" ? [] : items.filter((i) => i.decision === decision);
  return { decision, items, deciding: candidates.find((i) => i.by !== "unknown") ?? candidates[0] ?? null };
}

export type Classification =
  | { kind: "blocked"; pattern: string; what: string }
  /** `part`: the command of the line (one simple command) that needs the confirmation. */
  | { kind: "caution"; what: string; part: string }
  | { kind: "allowed" };

/** The §6 decision alone (no rules): blocked beats caution beats allowed. */
export function classifyCommand(command: string): Classification {
  return classification(decideLine(command));
}

export function classification(d: LineDecision): Classification {
  if (d.decision === "deny") return { kind: "blocked", pattern: d.deciding!.by, what: d.deciding!.what };
  if (d.decision === "ask") return { kind: "caution", what: d.deciding!.what, part: d.deciding!.command.trim() };
  return { kind: "allowed" };
}

/** The entry a command matches among the blocked ones, or null. */
export function blockedPattern(command: string): string | null {
  const c = classifyCommand(command);
  return c.kind === "blocked" ? c.pattern : null;
}

export function needsCaution(command: string): boolean {
  return classifyCommand(command).kind === "caution";
}
