import { existsSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { expandHome } from "../config/expand-home.ts";
import type { SandboxPolicy } from "./policy.ts";

/** Tool caches a build writes to; writable when they exist so builds keep working. */
const TOOL_CACHES = ["~/.cache", "~/.npm", "~/.bun/install/cache", "~/.cargo/registry", "~/.cargo/git", "~/go/pkg/mod", "~/.local/share/pnpm", "~/.yarn"];
/** Subagents keep their sessions here; writable for `task` only. */
export const AGENT_STATE_DIRS = ["~/.claude", "~/.codex", "~/.gemini", "~/.config/clemini"];
/** Credentials no command needs to read. */
const SECRETS = ["~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.azure", "~/.kube", "~/.docker/config.json", "~/.netrc", "~/.git-credentials"];

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
  loopback: boolean;
  /** `task` subagents also write their own state dirs. */
  agent?: boolean;
  home?: string;
}

/** Whether `path` is `root` or inside it (by path segment, not by prefix). */
export function under(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : root + "/");
}

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
  const wanted = inputs.mode === "read-only" ? temp : [...temp, ...inputs.allowedRoots, ...inputs.extraWritable.map(abs), ...TOOL_CACHES.map(abs), ...(inputs.agent ? AGENT_STATE_DIRS.map(abs) : [])];
  const writableRoots = unique(wanted.map(existing).filter((p): p is string => p !== null && p !== "/"));
  const readOnlyUnderWritable = writableRoots.flatMap(gitControlFiles);
  const denyRead = unique([...SECRETS, ...inputs.extraDenyRead].map(abs).concat(inputs.stateDirs.map((d) => resolve(d))).map((p) => existing(p) ?? p));
  return { mode: inputs.mode, writableRoots, readOnlyUnderWritable, denyRead, network: inputs.network, loopback: inputs.loopback };
}

/** A repository's hooks and config under `root`: written by a command, they would run later outside the sandbox. */
export function gitControlFiles(root: string): string[] {
  return [join(root, ".git", "hooks"), join(root, ".git", "config")].filter((p) => existsSync(p));
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
