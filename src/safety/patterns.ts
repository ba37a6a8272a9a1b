/**
 * Command safety classification: pure functions, table-tested.
 * The command line is split at command positions (commandSegments), each segment's real
 * command word is found past assignments and wrappers (commandViews), and only the rules
 * for that word are tried, anchored at the word. Every step is a linear scan, so any
 * command is classified in time proportional to its length (SPEC §14), and arguments of
 * other commands (`echo harm -rf /`) never match.
 * The redirect and fork-bomb rules are not about a command word and scan the whole text.
 */
import { commandSegments } from "./command-segments.ts";
import { commandViews, MAX_WRAPPERS } from "./command-word.ts";

export type Rule = {
  /** Tested against a view `word args…` of one segment (anchored at its start). */
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

/** Always refused wherever they appear in the text. */
const BLOCKED_ANYWHERE: readonly Rule[] = [
  { pattern: /(?:^|[^<>&0-9])[0-9&]?>>?\|?\s*\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk)/m, what: "overwrites a disk device" },
  { pattern: /(?:^|[^<>&0-9])[0-9&]?>>?\|?\s*\/(?:etc|boot)\//m, what: "writes into system configuration under /etc or /boot" },
  {
    pattern: /(?:^|[^<>&0-9])[0-9&]?>>?\|?\s*(?:~|\$HOME|\$\{HOME\})\/\.(?:bash|profile|zsh)/m,
    what: "rewrites the shell's start-up files",
  },
  { pattern: /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, what: "a fork bomb that exhausts the machine's processes" },
];

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

function exempt(key: string, view: string): boolean {
  const exemptions = EXEMPT_BY_WORD[key];
  if (!exemptions) return false;
  const args = view.split(/[ \t\r]+/).filter(Boolean).slice(1);
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

export type Classification =
  | { kind: "blocked"; pattern: string; what: string }
  /** `part`: the segment of the command line (one command) that needs the confirmation. */
  | { kind: "caution"; what: string; part: string }
  | { kind: "allowed" };

/** Blocked beats caution beats allowed; every segment of the command is looked at. */
export function classifyCommand(command: string): Classification {
  for (const rule of BLOCKED_ANYWHERE) {
    if (rule.pattern.test(command)) return { kind: "blocked", pattern: rule.pattern.source, what: rule.what };
  }
  let caution: { what: string; part: string } | null = null;
  for (const segment of commandSegments(command)) {
    const { words, argsAt, tooDeep } = commandViews(segment);
    for (let i = 0; i < words.length; i++) {
      const key = ruleKey(words[i]!);
      const blockedRules = BLOCKED_BY_WORD[key];
      const cautionRules: readonly Rule[] | undefined = caution === null ? CAUTION_BY_WORD[key] : undefined;
      if (!blockedRules && !cautionRules) continue;
      const raw = words[i]! + segment.slice(argsAt[i]!);
      const view = key === "git" ? gitView(raw) : raw;
      const blocked = firstMatch(blockedRules, view);
      if (blocked) return { kind: "blocked", pattern: blocked.pattern.source, what: blocked.what };
      const rule: Rule | null = cautionRules && !exempt(key, view) ? firstMatch(cautionRules, view) : null;
      if (rule) caution = { what: rule.what, part: segment.trim() };
    }
    if (tooDeep && caution === null) caution = { what: `runs a command behind more than ${MAX_WRAPPERS} wrappers`, part: segment.trim() };
  }
  return caution === null ? { kind: "allowed" } : { kind: "caution", ...caution };
}

/** The pattern a command matches among the blocked ones, or null. */
export function blockedPattern(command: string): string | null {
  const c = classifyCommand(command);
  return c.kind === "blocked" ? c.pattern : null;
}

export function needsCaution(command: string): boolean {
  return classifyCommand(command).kind === "caution";
}

