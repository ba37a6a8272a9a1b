import type { NetworkRules } from "./network/rules.ts";
import { chownSync, existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { expandHome } from "../expand-home.ts";
import { controlFilesUnder } from "./planted/control-files.ts";
import type { SandboxPolicy } from "./policy.ts";
import { under } from "./paths/under.ts";

/** Tool homes a build writes to: writable, and made when missing, so builds keep working (SPEC §11, §25). */
const TOOL_HOMES = [
  "~/.cache", "~/.npm", "~/.bun/install/cache", "~/.cargo/registry", "~/.cargo/git", "~/go", "~/.m2/repository", "~/.gradle/caches",
  "~/.local/share/pnpm", "~/.yarn",
];
/** Subagents keep their sessions here; writable for `task` only. */
export const AGENT_STATE_DIRS = ["~/.claude", "~/.codex", "~/.gemini", "~/.config/clemini"];
/** Credentials no command needs to read (SPEC §11, §20). */
const SECRETS = [
  "~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.azure", "~/.kube", "~/.docker/config.json", "~/.netrc", "~/.git-credentials",
  "~/.config/gh", "~/.npmrc", "~/.pypirc", "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.terraform.d/credentials.tfrc.json",
  "~/.terraform.d/credentials", "~/.m2/settings.xml", "~/.m2/settings-security.xml", "~/.vault-token", "/etc/shadow", "/etc/gshadow",
  "~/.bash_history", "~/.zsh_history", "~/.python_history", "~/.node_repl_history", "~/.psql_history", "~/.mysql_history",
  "~/.sqlite_history", "~/.rediscli_history", "~/.irb_history", "~/.lesshst", "~/.history",
];
/** Secrets by pattern: what matches in these folders now (the fixed names above cover the usual ones made later). */
const SECRET_PATTERNS: [dir: string, name: RegExp][] = [
  ["~", /^\..*_history$/],
  ["~/.cargo", /^credentials/],
  ["~/.terraform.d", /^credentials/],
  ["~/.m2", /^settings.*\.xml$/],
];
/** The subagents' own logins: hidden from commands, readable by `task` (a subagent needs its login). */
const AGENT_CREDENTIALS = ["~/.claude/.credentials.json", "~/.codex/auth.json", "~/.gemini/oauth_creds.json"];
/**
 * The subagents' settings, where hooks and notify commands live: read-only for `task`, whose
 * state dirs are writable (a hook written there would run outside the sandbox the next time
 * a person starts that agent). Made empty when missing, so there is a file to protect.
 */
const AGENT_SETTINGS: [path: string, empty: string][] = [
  ["~/.claude/settings.json", "{}\n"],
  ["~/.claude/settings.local.json", "{}\n"],
  ["~/.codex/config.toml", ""],
  ["~/.gemini/settings.json", "{}\n"],
];

export interface PolicyInputs {
  mode: "workspace-write" | "read-only";
  /** Canonical allowed roots (cwd plus allowed_paths). */
  allowedRoots: string[];
  /** config sandbox_writable (may start with ~). */
  extraWritable: string[];
  /** config sandbox_deny_read (may start with ~). */
  extraDenyRead: string[];
  /** agent-shell's state dirs: hidden from every command. */
  stateDirs: string[];
  network: boolean;
  allowlist: NetworkRules | null;
  loopback: boolean;
  allowUnixSockets: string[];
  /** `task` subagents also write their own state dirs. */
  agent?: boolean;
  home?: string;
}

export { under };

/** The real path of an existing path, or null. */
function existing(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/** The writable roots, read-only holes and hidden paths a mode means on this machine now. */
export function buildPolicy(inputs: PolicyInputs): SandboxPolicy {
  const home = inputs.home ?? process.env.HOME ?? "/nonexistent";
  const abs = (p: string) => {
    const e = expandHome(p, { HOME: home });
    return isAbsolute(e) ? e : resolve(e);
  };
  const temp = ["/tmp", process.env.TMPDIR ?? "", tmpdir()].filter(Boolean);
  if (inputs.mode === "workspace-write") makeWritableHomes(inputs.extraWritable, home);
  const wanted = inputs.mode === "read-only" ? temp : [...temp, ...inputs.allowedRoots, ...inputs.extraWritable.map(abs), ...TOOL_HOMES.map(abs), ...(inputs.agent ? AGENT_STATE_DIRS.map(abs) : [])];
  const writableRoots = unique(wanted.map(existing).filter((p): p is string => p !== null && p !== "/"));
  const workspace = inputs.mode === "read-only" ? [] : [...inputs.allowedRoots, ...inputs.extraWritable.map(abs)];
  const workspaceRoots = unique(workspace.map(existing).filter((p): p is string => p !== null && p !== "/"));
  const readOnlyUnderWritable = unique([...(inputs.agent ? agentSettings(abs) : []), ...controlFilesUnder(writableRoots, home)]);
  const secrets = [...SECRETS, ...AGENT_CREDENTIALS.filter(() => !inputs.agent)].map(abs).concat(secretsByPattern(abs));
  const denyRead = unique(secrets.concat(inputs.extraDenyRead.map(abs), inputs.stateDirs.map((d) => resolve(d))).map((p) => existing(p) ?? p));
  return { mode: inputs.mode, writableRoots, workspaceRoots, readOnlyUnderWritable, denyRead, network: inputs.network, allowlist: inputs.allowlist, loopback: inputs.loopback, allowUnixSockets: inputs.allowUnixSockets.map(abs) };
}

/**
 * Makes the tool homes and the sandbox_writable entries that are missing, those in the home
 * owned by the home's owner (a server running as root may serve another user's HOME).
 * Returns why each sandbox_writable entry that could not be made is not writable: said in
 * `config show`, `sandbox check` and a connection's first result, never dropped in silence.
 */
export function makeWritableHomes(extraWritable: string[], home = process.env.HOME ?? ""): string[] {
  const homeStat = home && home !== "/" ? statSync(home, { throwIfNoEntry: false }) : undefined;
  const owner = homeStat?.isDirectory() && process.getuid?.() === 0 && homeStat.uid !== 0 ? { uid: homeStat.uid, gid: homeStat.gid } : null;
  const inHome = (p: string) => (homeStat && under(p, home) ? owner : null);
  if (homeStat?.isDirectory()) for (const dir of TOOL_HOMES) makeDir(expandHome(dir, { HOME: home }), owner);
  const problems: string[] = [];
  for (const entry of extraWritable) {
    const dir = resolve(expandHome(entry, { HOME: home }));
    const failed = makeDir(dir, inHome(dir));
    if (failed) problems.push(`sandbox_writable '${entry}' (${dir}) does not exist and could not be made (${failed}): it is not writable`);
  }
  return problems;
}

/** `dir` and its missing parents, made with `owner`; null when it exists now (a file counts), else why not. */
function makeDir(dir: string, owner: { uid: number; gid: number } | null): string | null {
  if (existsSync(dir)) return null;
  try {
    const missing: string[] = [];
    for (let p = dir; !lstatSync(p, { throwIfNoEntry: false }); p = dirname(p)) missing.unshift(p);
    if (!missing.length) return "a symlink to nothing";
    for (const p of missing) {
      mkdirSync(p);
      if (owner) chownSync(p, owner.uid, owner.gid);
    }
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

function secretsByPattern(abs: (p: string) => string): string[] {
  return SECRET_PATTERNS.flatMap(([dir, name]) => {
    try {
      return readdirSync(abs(dir)).filter((entry) => name.test(entry)).map((entry) => join(abs(dir), entry));
    } catch {
      return [];
    }
  });
}

/** The subagents' settings files that exist (their folder does), made empty if missing. */
function agentSettings(abs: (p: string) => string): string[] {
  return AGENT_SETTINGS.flatMap(([path, empty]) => {
    const file = abs(path);
    if (!existsSync(dirname(file))) return [];
    try {
      writeFileSync(file, empty, { flag: "wx", mode: 0o600 });
    } catch {}
    return existsSync(file) ? [existing(file) ?? file] : [];
  });
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
