import type { NetworkRules } from "./network/rules.ts";
export type SandboxMode = "workspace-write" | "read-only" | "off";
export type SandboxLevel = "namespaces" | "landlock";
export interface SandboxPolicy {
  mode: "workspace-write" | "read-only";
  writableRoots: string[]; // absolute, symlinks resolved, existing
  /** The writable roots that are a workspace (allowed paths, sandbox_writable): where git repositories are protected. */
  workspaceRoots: string[];
  readOnlyUnderWritable: string[]; // control files (control-files.ts) and, for `task`, the subagents' settings (git files: git-guard.ts)
  denyRead: string[]; // secrets + agent-shell's state dir; absolute; may not exist
  network: boolean; // false → no network except loopback (and, with allowlist, the proxy)
  /** The network by name (SPEC §21): set, the sandbox's own network namespace reaches out only through the proxy. */
  allowlist?: NetworkRules | null;
  loopback: boolean;
  /** Unix sockets a command may connect to (config sandbox_allow_unix_sockets); none: no AF_UNIX sockets at all. */
  allowUnixSockets: string[];
}

export const SANDBOX_MODES = ["workspace-write", "read-only", "off"] as const;

/** How strict a mode is: a per-call mode looser than the server's needs confirmation. */
export function strictness(mode: SandboxMode): number {
  return mode === "read-only" ? 2 : mode === "workspace-write" ? 1 : 0;
}
