import { keptSandboxCommand } from "./namespaces/bwrap.ts";
import { sandboxLevel, type LevelChoice } from "./index.ts";
import type { SandboxLevel, SandboxMode, SandboxPolicy } from "./policy.ts";
import { levelGaps } from "./gaps.ts";
import { buildPolicy, makeWritableHomes, type PolicyInputs, under } from "./roots.ts";
import { AGENT_API_HOSTS, networkRules, parseEntries, type NetworkRules } from "./network/rules.ts";

/** Distinct policies kept (connections and CLI requests with roots of their own each make one). */
const MAX_CACHED_RUNS = 64;

/** What a result says about containment: the mode applied, or why there was none. */
export type SandboxLabel = SandboxMode | "remote" | "unavailable";

/** A sandbox to apply to commands: one per policy, kept (runtime/containment/kept-sandbox.ts). */
export interface SandboxRun {
  policy: SandboxPolicy;
  level: SandboxLevel;
  /**
   * namespaces: the bwrap argv that builds this policy's sandbox around `first` (its pid 1),
   * telling that process's host pid on `infoFd` (bwrap.ts keptSandboxCommand). The runtime
   * starts it with the launcher environment (runtime/env.ts), never a command's.
   */
  keptSandboxArgv(first: string[], opts: { cwd: string; infoFd: number }): string[];
  /** agent-shell's state dir (hidden from commands): where an allowlist sandbox's network sockets live. */
  stateRoot: string;
}

/** Thrown when a mode set explicitly cannot be provided here (faces exit 2). */
export class SandboxUnavailableError extends Error {
  override name = "ConfigError";
}

export interface SandboxSettings {
  /** Mode from config/flag/env, or undefined for the default. */
  mode?: SandboxMode;
  writable: string[];
  denyRead: string[];
  network: boolean;
  /** Set: the network by name (SPEC §21): a namespace of its own whose only way out is the proxy. */
  allowlist: NetworkRules | null;
  loopback: boolean;
  allowUnixSockets: string[];
  allowedRoots: string[];
  stateDirs: string[];
  /** The state dir root, where the mode-000 placeholder file lives. */
  stateRoot: string;
  /** The level already known (a remembered one, to describe the sandbox before the probe is done); else probed. */
  knownLevel?: LevelChoice;
}

/** The network mode a config means: `network`, else the older `sandbox_network` (on/off), else the allowlist (SPEC §21). */
export function networkMode(config: { network?: "allowlist" | "on" | "off"; sandbox_network?: boolean }): "allowlist" | "on" | "off" {
  return config.network ?? (config.sandbox_network === undefined ? "allowlist" : config.sandbox_network ? "on" : "off");
}

/** The config keys a Sandbox is made from (narrow: the sandbox knows no config module). */
export interface SandboxConfig {
  sandbox_writable: string[];
  sandbox_deny_read: string[];
  network?: "allowlist" | "on" | "off";
  sandbox_network?: boolean;
  network_allow: string[];
  network_allow_defaults: boolean;
  network_deny: string[];
  network_forward: number[];
  network_publish: boolean;
  sandbox_network_loopback: boolean;
  sandbox_allow_unix_sockets: string[];
}

/**
 * The Sandbox for a server (or `sandbox check`): `mode` undefined means the default;
 * agent-shell's state dirs (`stateRoot` and the default one) are hidden from commands.
 */
export function sandboxFromConfig(
  config: SandboxConfig,
  opts: { mode?: SandboxMode; allowedRoots: string[]; stateRoot: string; defaultStateRoot: string; knownLevel?: LevelChoice },
): Sandbox {
  const network = networkMode(config);
  return new Sandbox({
    mode: opts.mode,
    writable: config.sandbox_writable,
    denyRead: config.sandbox_deny_read,
    network: network === "on",
    allowlist: network === "allowlist" ? networkRules(config) : null,
    loopback: config.sandbox_network_loopback,
    allowUnixSockets: config.sandbox_allow_unix_sockets,
    allowedRoots: opts.allowedRoots,
    stateDirs: [opts.stateRoot, opts.defaultStateRoot],
    stateRoot: opts.stateRoot,
    knownLevel: opts.knownLevel,
  });
}

/**
 * The server's containment: the mode it applies by default and the level that enforces
 * it. A mode set explicitly that the kernel cannot provide is an error; the default
 * falls back to `off`, and says so (`unavailable`) everywhere.
 */
export class Sandbox {
  readonly mode: SandboxMode;
  readonly explicit: boolean;
  private cache = new Map<string, SandboxRun>();
  private probed?: LevelChoice;
  private unmade?: string[];

  constructor(private settings: SandboxSettings) {
    this.probed = settings.knownLevel;
    this.explicit = settings.mode !== undefined;
    this.mode = settings.mode ?? "workspace-write";
    if (this.explicit && this.mode !== "off" && this.choice.level === null) {
      throw new SandboxUnavailableError(
        `sandbox mode '${this.mode}' was requested but this machine cannot provide it: ${(this.choice as { missing: string }).missing}. ` +
          `Install bubblewrap (or enable Landlock), or set sandbox = "off" to run commands without containment.`,
      );
    }
  }

  /**
   * The level that enforces the modes here. Probed on first need: a server whose default
   * is `off` pays nothing until a call (or a daemon connection) asks for a sandbox.
   */
  get choice(): LevelChoice {
    return (this.probed ??= sandboxLevel());
  }

  /** Whether commands reach the network by name only (SPEC §21). */
  get networkAllowlist(): boolean {
    return this.settings.allowlist !== null;
  }

  /** True when the default mode could not be applied (commands run uncontained). */
  get unavailable(): boolean {
    return this.mode !== "off" && this.choice.level === null;
  }

  /** sandbox_writable entries that do not exist and could not be made (tried once, at the first need). */
  get writableProblems(): string[] {
    return (this.unmade ??= this.mode === "off" ? [] : makeWritableHomes(this.settings.writable));
  }

  /**
   * What is said once per connection, in the initialize instructions and on the first result
   * (SPEC §25): what `level` cannot hold, and the sandbox_writable entries not in force.
   */
  notes(level: SandboxLevel | string | undefined): string[] {
    return [...levelGaps(level), ...this.writableProblems];
  }

  /** The label and the wrapper for a call asking for `mode` (`task` subagents also write their state dirs). */
  forCall(mode: SandboxMode, opts: { agent?: boolean; cwd?: string; roots?: string[] } = {}): { label: SandboxLabel; level?: SandboxLevel; run?: SandboxRun } {
    if (mode === "off") return { label: "off" };
    if (this.choice.level === null) return { label: "unavailable" };
    const key = `${mode}:${opts.agent === true}`;
    let run = this.cached(key, () => this.makeRun(this.policy(mode, opts.agent === true)));
    // A daemon connection has its own allowed roots, and a CLI request names its directory:
    // those (and the validated working directory of the call) are then its workspace.
    if (mode === "workspace-write") {
      const p = run.policy;
      const extra = [...new Set([...(opts.roots ?? []), ...(opts.cwd ? [opts.cwd] : [])])].filter(
        (dir) => dir !== "/" && !p.writableRoots.some((r) => under(dir, r)),
      ).sort();
      if (extra.length) {
        run = this.cached(`${key}:${extra.join(":")}`, () =>
          this.makeRun({ ...p, writableRoots: [...p.writableRoots, ...extra], workspaceRoots: [...p.workspaceRoots, ...extra] }),
        );
      }
    }
    return { label: mode, level: run.level, run };
  }

  /** One run per policy: a run keeps its sandbox (runtime/containment/kept-sandbox.ts) and spawner (runtime/local/served-spawn.ts) between calls. */
  private cached(key: string, make: () => SandboxRun): SandboxRun {
    let run = this.cache.get(key);
    if (!run) {
      if (this.cache.size >= MAX_CACHED_RUNS) this.cache.delete(this.cache.keys().next().value!);
      run = make();
      this.cache.set(key, run);
    }
    return run;
  }

  /** The policy a mode means here (for `sandbox check` and `config show`). */
  policy(mode: "workspace-write" | "read-only", agent = false): SandboxPolicy {
    const s = this.settings;
    const inputs: PolicyInputs = {
      mode,
      allowedRoots: s.allowedRoots,
      extraWritable: s.writable,
      extraDenyRead: s.denyRead,
      stateDirs: s.stateDirs,
      network: s.network,
      // A subagent reaches its own model's API too.
      allowlist: s.allowlist && agent ? { ...s.allowlist, defaults: [...s.allowlist.defaults, ...parseEntries(AGENT_API_HOSTS)] } : s.allowlist,
      loopback: s.loopback,
      allowUnixSockets: s.allowUnixSockets,
      agent,
    };
    return buildPolicy(inputs);
  }

  private makeRun(policy: SandboxPolicy): SandboxRun {
    const choice = this.choice;
    const stateRoot = this.settings.stateRoot;
    const level = choice.level === "namespaces" ? "namespaces" : "landlock";
    return {
      policy,
      level,
      stateRoot,
      keptSandboxArgv: (first, opts) => {
        if (choice.level !== "namespaces") throw new Error("a kept sandbox needs the namespaces level");
        return keptSandboxCommand(choice.bwrap.path, policy, first, { cwd: opts.cwd, stateRoot, infoFd: opts.infoFd });
      },
    };
  }
}

