/**
 * The user's rules (SPEC §22): `[[rules]]` tables, each naming one simple command by its
 * first words (`prefix`, `*` for any one word) or by a pattern (run on the linear-time
 * matcher), with a decision — allow, ask or deny — and optional reason, cwd and host.
 * Matched against every view of a command (past wrappers: `env git push` is `git push`).
 */
import { z } from "zod";
import { expandHome } from "../../expand-home.ts";
import { said, type View, normalizeWord } from "../parser/command-word.ts";
import { viewText } from "./patterns.ts";
import { compileUserRegex } from "../regex/regex-guard.ts";

export const DECISIONS = ["allow", "ask", "deny"] as const;
export type Verdict = (typeof DECISIONS)[number];

export const RuleSchema = z
  .object({
    prefix: z.array(z.string().min(1)).min(1).optional(),
    pattern: z.string().min(1).optional(),
    decision: z.enum(DECISIONS),
    reason: z.string().min(1).optional(),
    cwd: z.string().min(1).optional(),
    host: z.string().min(1).optional(),
    /** Command lines and the decision this rules file expects for them (`agent-shell rules test`). */
    examples: z.array(z.object({ command: z.string().min(1), decision: z.enum(DECISIONS) }).strict()).optional(),
  })
  .strict()
  .superRefine((r, issue) => {
    if ((r.prefix === undefined) === (r.pattern === undefined)) {
      issue.addIssue({ code: "custom", path: ["prefix"], message: 'give prefix = ["git", "push"] or pattern = "REGEX", one of the two' });
    }
    if (r.pattern !== undefined) {
      try {
        compileUserRegex(r.pattern);
      } catch (e) {
        issue.addIssue({ code: "custom", path: ["pattern"], message: (e as Error).message });
      }
    }
  });

export type RuleConfig = z.infer<typeof RuleSchema>;

/** A rule ready to match, with where it came from (for `rules check` and the audit record). */
export type Rule = RuleConfig & { source: string; index: number; regex?: RegExp };

/** Where a call runs: a rule with `cwd` or `host` applies only there. */
export type Where = { cwd?: string; host?: string };

export function compileRules(rules: readonly RuleConfig[], source: string): Rule[] {
  return rules.map((r, index) => ({
    ...r,
    ...(r.cwd !== undefined ? { cwd: expandHome(r.cwd) } : {}),
    source,
    index,
    ...(r.pattern !== undefined ? { regex: compileUserRegex(r.pattern) } : {}),
  }));
}

const RANK: Record<Verdict, number> = { allow: 0, ask: 1, deny: 2 };
export const stricter = (a: Verdict, b: Verdict): Verdict => (RANK[a] >= RANK[b] ? a : b);

/** The strictest rule that matches any view of the command, or null. */
export function matchRule(rules: readonly Rule[], views: readonly View[], where: Where): Rule | null {
  let best: Rule | null = null;
  for (const rule of rules) {
    if (best && RANK[rule.decision] <= RANK[best.decision]) continue;
    if (!applies(rule, where)) continue;
    if (views.some((v) => matches(rule, v))) best = rule;
  }
  return best;
}

function applies(rule: Rule, where: Where): boolean {
  if (rule.host !== undefined && rule.host !== (where.host ?? "local")) return false;
  if (rule.cwd !== undefined) {
    const base = rule.cwd.replace(/\/+$/, "");
    if (!where.cwd || (where.cwd !== base && !where.cwd.startsWith(base + "/"))) return false;
  }
  return true;
}

function matches(rule: Rule, view: View): boolean {
  if (rule.regex) return rule.regex.test(viewText(view));
  const prefix = rule.prefix!;
  if (prefix.length > view.args.length + 1) return false;
  for (let i = 0; i < prefix.length; i++) {
    const want = prefix[i]!;
    if (want === "*") continue;
    const have = i === 0 ? view.word : said(view.args[i - 1]!);
    if ((i === 0 ? normalizeWord(want) : want) !== have) return false;
  }
  return true;
}

/** Whether a rule names this command word (only such a rule can waive a §6 caution). */
export function namesWord(rule: Rule, word: string): boolean {
  if (rule.prefix) return rule.prefix[0] !== "*" && normalizeWord(rule.prefix[0]!) === word;
  return rule.pattern!.includes(word);
}

/** How a rule is shown: `rule 2 in FILE: prefix git push`. */
export function ruleLabel(rule: Rule): string {
  const what = rule.prefix ? `prefix ${rule.prefix.join(" ")}` : `pattern ${rule.pattern}`;
  return `rule ${rule.index + 1} (${rule.source}): ${what}`;
}
