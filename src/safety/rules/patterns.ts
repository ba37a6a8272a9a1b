/**
 * The §6 table: what each simple command would do when it needs confirmation (caution) or
 * is never run (blocked). Keyed by the command word of each view of the command (past
 * wrappers, command-word.ts), and anchored at it: arguments of other commands (`echo harm
 * -rf /`) and quoted text never match. Output redirections and the fork bomb are judged on
 * what the parser found (bash-parser.ts). Pure functions, table-tested.
 */
import type { Redirect, SimpleCommand } from "../parser/bash-parser.ts";
import { commandViews, MAX_WRAPPERS, said, type View } from "../parser/command-word.ts";

export type Rule = {
  /** Tested against a view `word args…` of one command (anchored at its start). */
  pattern: RegExp;
  /** What the command would do, in words, for the message. */
  what: string;
};

/** Rules for git see `git <subcommand> …`: its global options are stepped over first (gitView). */
const GIT = String.raw`^git\s+`;

/** git's global options that take a separate value (`git -C dir -c k=v push`). */
const GIT_OPTIONS_WITH_VALUE = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"]);

/** `git -C dir --no-pager push -f` → `git push -f`, by a scan (a regex over the options backtracks). */
function gitView(view: string): string {
  let at = 3;
  for (;;) {
    while (view[at] === " " || view[at] === "\t") at++;
    if (view[at] !== "-") break;
    let end = at;
    while (end < view.length && view[end] !== " " && view[end] !== "\t") end++;
    const option = view.slice(at, end);
    at = end;
    if (GIT_OPTIONS_WITH_VALUE.has(option)) {
      while (view[at] === " " || view[at] === "\t") at++;
      while (at < view.length && view[at] !== " " && view[at] !== "\t") at++;
    }
  }
  return at === 4 ? view : "git " + view.slice(at);
}

/** Always refused, keyed by command word: they destroy the machine or its configuration. */
const BLOCKED_BY_WORD: Record<string, readonly Rule[]> = {
  rm: [
    {
      pattern: /^rm\s+(?:-[a-zA-Z]+\s+|--[a-z-]+\s+)*["']?(?:\/\*?|~\/?\*?)["']?(?:\s|$)/,
      what: "deletes everything under / or the home directory",
    },
  ],
  dd: [{ pattern: /^dd\s+.*\bif=/, what: "copies raw bytes onto a file or disk device" }],
  mkfs: [{ pattern: /^mkfs/, what: "formats a disk, erasing it" }],
  chmod: [
    {
      pattern: /^chmod\s+(?:-[a-zA-Z]+\s+|--[a-z-]+\s+)*0?777\s+\//,
      what: "makes system files writable by every user",
    },
  ],
  chown: [{ pattern: /^chown\s+(?:\S+\s+)*\//, what: "changes the owner of system files" }],
};

/** Output redirections always refused, by where they write (`$HOME` counts as `~`). */
const BLOCKED_TARGETS: readonly Rule[] = [
  { pattern: /^\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk)/, what: "overwrites a disk device" },
  { pattern: /^\/(?:etc|boot)\//, what: "writes into system configuration under /etc or /boot" },
  { pattern: /^~\/\.(?:bash|profile|zsh)/, what: "rewrites the shell's start-up files" },
];

export const FORK_BOMB = "a fork bomb that exhausts the machine's processes";

/**
 * Harmless forms of caution words: they run without asking. Checked on the words of the
 * view (a regex with a repeated alternation over many arguments backtracks).
 */
type Exemption = { form: string; what: string; test: (args: string[]) => boolean };
const isOperand = (w: string) => !w.startsWith("-");
const EXEMPT_BY_WORD: Record<string, readonly Exemption[]> = {
  chmod: [
    {
      form: "chmod +x|u+x|a+x FILE…",
      what: "only adds the execute bit to the named files",
      test: (args) => args.length >= 2 && /^[ua]?\+x$/.test(args[0]!) && args.slice(1).every(isOperand),
    },
  ],
  kill: [
    {
      form: "kill -0 PID…",
      what: "signal 0 only checks that a process exists",
      test: (args) => args.length >= 2 && args[0] === "-0" && args.slice(1).every((p) => isOperand(p) || /^-\d+$/.test(p)),
    },
  ],
};

function exempt(key: string, view: View): boolean {
  const exemptions = EXEMPT_BY_WORD[key];
  if (!exemptions) return false;
  const args = view.args.map(said);
  return exemptions.some((e) => e.test(args));
}

const WORD_ONLY = String.raw`(?:\s|$)`;
const deletes = "deletes or overwrites files";

/** Need the caller's confirmation first, keyed by command word. */
const CAUTION_BY_WORD: Record<string, readonly Rule[]> = {
  sudo: [{ pattern: /^sudo(?:\s|$)/, what: "runs a command as another user" }],
  doas: [{ pattern: /^doas(?:\s|$)/, what: "runs a command as another user" }],
  su: [{ pattern: /^su(?:\s|$)/, what: "switches to another user" }],
  rm: [{ pattern: /^rm(?:\s|$)/, what: "deletes files" }],
  mv: [{ pattern: /^mv(?:\s|$)/, what: "moves files, possibly over others" }],
  chmod: [{ pattern: /^chmod(?:\s|$)/, what: "changes file permissions" }],
  chown: [{ pattern: /^chown(?:\s|$)/, what: "changes file ownership" }],
  kill: [{ pattern: /^kill(?:\s|$)/, what: "signals processes" }],
  pkill: [{ pattern: /^pkill(?:\s|$)/, what: "signals processes by name" }],
  killall: [{ pattern: /^killall(?:\s|$)/, what: "signals processes by name" }],
  shred: [{ pattern: /^shred(?:\s|$)/, what: "destroys file contents" }],
  truncate: [{ pattern: /^truncate(?:\s|$)/, what: "cuts files short" }],
  docker: [{ pattern: new RegExp(String.raw`^docker\s+(?:container\s+rm|image\s+rm|rm|rmi)` + WORD_ONLY), what: "removes containers or images" }],
  cargo: [{ pattern: new RegExp(String.raw`^cargo\s+publish` + WORD_ONLY), what: "publishes a crate irreversibly" }],
  npm: [{ pattern: new RegExp(String.raw`^npm\s+publish` + WORD_ONLY), what: "publishes a package irreversibly" }],
  find: [
    { pattern: /^find\s.*\s-delete(?:\s|$)/, what: "deletes every file it finds" },
    { pattern: /^find\s.*\s-(?:exec|execdir|ok|okdir)\s+\S*(?:rm|shred|unlink|truncate)(?:\s|$)/, what: "deletes every file it finds" },
  ],
  git: [
    {
      pattern: new RegExp(GIT + String.raw`push\b.*\s(?:-[a-zA-Z]*f[a-zA-Z]*|--force(?:-with-lease)?(?:=\S*)?|\+\S+)` + WORD_ONLY),
      what: "overwrites history on the remote",
    },
    { pattern: new RegExp(GIT + String.raw`reset\b.*\s--hard` + WORD_ONLY), what: "discards uncommitted changes" },
    { pattern: new RegExp(GIT + String.raw`clean\b.*\s(?:-[a-zA-Z]*f[a-zA-Z]*|--force)` + WORD_ONLY), what: "deletes untracked files" },
    { pattern: new RegExp(GIT + String.raw`checkout\b.*\s--\s+\S`), what: "discards uncommitted changes to the named paths" },
    // `git restore --staged` alone only unstages; every other form rewrites the worktree.
    {
      pattern: new RegExp(GIT + String.raw`restore(?!.*\s(?:--staged|-S)(?:\s|$))` + WORD_ONLY),
      what: "discards uncommitted changes in the worktree",
    },
    { pattern: new RegExp(GIT + String.raw`restore(?=.*\s(?:--worktree|-[a-zA-Z]*W[a-zA-Z]*)(?:\s|$))` + WORD_ONLY), what: "discards uncommitted changes in the worktree" },
    { pattern: new RegExp(GIT + String.raw`branch\b.*\s-[a-zA-Z]*D[a-zA-Z]*` + WORD_ONLY), what: "deletes a branch even if it is not merged" },
    {
      pattern: new RegExp(GIT + String.raw`branch(?=.*\s(?:--delete|-d)(?:\s|$))(?=.*\s(?:--force|-f)(?:\s|$))` + WORD_ONLY),
      what: "deletes a branch even if it is not merged",
    },
  ],
};

/** `mkfs.ext4` and friends share the rules of `mkfs`. */
function ruleKey(word: string): string {
  return word.startsWith("mkfs") ? "mkfs" : word;
}

function firstMatch(rules: readonly Rule[] | undefined, view: string): Rule | null {
  if (!rules) return null;
  for (const rule of rules) if (rule.pattern.test(view)) return rule;
  return null;
}

/** A §6 entry a command matched: `word` is the command word it is keyed on (a rule naming it can waive a caution). */
export type Entry = { kind: "blocked" | "caution"; what: string; word: string };

/** The §6 entry of one simple command: blocked beats caution; null when it needs neither. */
export function tableEntry(command: SimpleCommand): Entry | null {
  const { views, tooDeep } = commandViews(command.words);
  let caution: Entry | null = null;
  for (const view of views) {
    const key = ruleKey(view.word);
    const blockedRules = BLOCKED_BY_WORD[key];
    const cautionRules: readonly Rule[] | undefined = caution === null ? CAUTION_BY_WORD[key] : undefined;
    if (!blockedRules && !cautionRules) continue;
    const text = viewText(view);
    const blocked = firstMatch(blockedRules, text);
    if (blocked) return { kind: "blocked", what: blocked.what, word: view.word };
    const rule: Rule | null = cautionRules && !exempt(key, view) ? firstMatch(cautionRules, text) : null;
    if (rule) caution = { kind: "caution", what: rule.what, word: view.word };
  }
  if (tooDeep && caution === null) caution = { kind: "caution", what: `runs a command behind more than ${MAX_WRAPPERS} wrappers`, word: views[0]?.word ?? "" };
  return caution;
}

/** The §6 entry of an output redirection (always blocked when it has one). */
export function redirectEntry(redirect: Redirect): Entry | null {
  const rule = firstMatch(BLOCKED_TARGETS, said(redirect.target));
  return rule ? { kind: "blocked", what: rule.what, word: ">" } : null;
}

/** `word args…` as one line, git's global options stepped over. */
export function viewText(view: View): string {
  let text = view.word;
  for (const a of view.args) text += " " + said(a);
  return ruleKey(view.word) === "git" ? gitView(text) : text;
}
