import { existsSync, readFileSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { defaultStateDir } from "../background/state/state-dir.ts";
import { loadConfig } from "../config/load.ts";
import { allowedRoots } from "../safety/paths.ts";
import { bwrapVersion, probeBwrap } from "../sandbox/namespaces/bwrap.ts";
import { sandboxLevel } from "../sandbox/index.ts";
import { probeLandlock } from "../sandbox/landlock/index.ts";
import { networkMode, sandboxFromConfig } from "../sandbox/setup.ts";
import { DEFAULT_ALLOW } from "../sandbox/network/rules.ts";
import { configFlags, parseHostFlags } from "./host-flags.ts";
import { levelGaps } from "../sandbox/gaps.ts";
import { UsageError } from "./usage.ts";

export const SANDBOX_HELP = `Usage: agent-shell sandbox check [--cwd DIR] [--allow DIR]... [--config FILE] [--json]

What this kernel supports for containment (bubblewrap, user namespaces, Landlock, seccomp)
and what each sandbox mode would enforce here: writable roots, unreadable paths, network,
and the level (namespaces or landlock) that enforces it.
`;

/** The kernel features behind each level, probed now. */
function kernelSupport() {
  const bwrap = probeBwrap();
  const landlock = probeLandlock();
  const status = safeRead("/proc/self/status");
  const seccompMode = /^Seccomp:\s*(\d)/m.exec(status)?.[1];
  return {
    bwrap: "path" in bwrap ? { found: true, path: bwrap.path, version: bwrapVersion(bwrap.path), namespaces: true } : { found: Bun.which("bwrap") !== null, namespaces: false, error: bwrap.error },
    user_namespaces: userNamespaces(),
    landlock: "abi" in landlock ? { abi: landlock.abi } : { abi: 0, error: landlock.error },
    seccomp: { available: existsSync("/proc/sys/kernel/seccomp/actions_avail"), current_filter: seccompMode === "2" },
  };
}

function userNamespaces(): { available: boolean; max?: number } {
  const max = Number(safeRead("/proc/sys/user/max_user_namespaces").trim());
  const trial = Bun.which("unshare") ? Bun.spawnSync(["unshare", "-U", "true"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0 : max > 0;
  return { available: trial, ...(Number.isFinite(max) ? { max } : {}) };
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** `agent-shell sandbox check`: kernel support and the policy of each mode, as text or --json. */
export async function sandboxCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseHostFlags("sandbox", argv);
  if (values.help) {
    process.stdout.write(SANDBOX_HELP);
    return 0;
  }
  if (positionals[0] !== "check" || positionals.length > 1) throw new UsageError("usage: agent-shell sandbox check [--cwd DIR] [--allow DIR]... [--config FILE] [--json]");
  const { config, sources } = loadConfig({ configFile: values.config, flags: configFlags(values) });
  const cwd = realpathSync(resolve(values.cwd ?? process.cwd()));
  const roots = allowedRoots(cwd, config.allowed_paths);
  const stateRoot = resolve(config.state_dir ?? defaultStateDir());
  // No mode: `check` reports every mode, and must not fail where an explicit one would.
  const sandbox = sandboxFromConfig(config, { allowedRoots: roots, stateRoot, defaultStateRoot: defaultStateDir() });
  const choice = sandboxLevel();
  const level = choice.level;
  const modes = Object.fromEntries(
    (["workspace-write", "read-only"] as const).map((mode) => {
      const p = sandbox.policy(mode);
      return [
        mode,
        level
          ? { level, writable_roots: p.writableRoots, read_only_under_writable: p.readOnlyUnderWritable, deny_read: p.denyRead, network: p.network ? "on" : p.allowlist ? "allowlist" : p.loopback ? "loopback only" : "off" }
          : { level: null, enforced: false, missing: (choice as { missing: string }).missing },
      ];
    }),
  );
  const report = {
    kernel: kernelSupport(),
    level,
    ...(level === null ? { missing: (choice as { missing: string }).missing } : {}),
    configured_mode: config.sandbox ?? (level ? "workspace-write" : "unavailable"),
    configured_mode_source: sources.sandbox,
    modes: { ...modes, off: { enforced: false } },
    network: networkReport(config),
    not_held: level ? levelGaps(level) : [],
    sandbox_writable_not_in_force: sandbox.writableProblems,
  };
  if (values.json) {
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
    return 0;
  }
  const k = report.kernel;
  const out: string[] = [];
  out.push("Kernel support");
  out.push(`  bubblewrap        ${k.bwrap.found ? `${"version" in k.bwrap ? k.bwrap.version : "found"} ${k.bwrap.namespaces ? "(namespaces work)" : `(cannot create namespaces: ${"error" in k.bwrap ? k.bwrap.error : ""})`}` : "not installed (apt-get install bubblewrap)"}`);
  out.push(`  user namespaces   ${k.user_namespaces.available ? "yes" : "no"}${k.user_namespaces.max !== undefined ? ` (max ${k.user_namespaces.max})` : ""}`);
  out.push(`  Landlock          ${k.landlock.abi ? `ABI ${k.landlock.abi}` : `no (${"error" in k.landlock ? k.landlock.error : "ABI 0"})`}`);
  out.push(`  seccomp           ${k.seccomp.available ? "available" : "not available"}`);
  out.push(`Level: ${level ?? `none — commands would run uncontained (${report.missing})`}`);
  out.push(`Configured mode: ${report.configured_mode} (${report.configured_mode_source})`);
  for (const [mode, m] of Object.entries(modes) as Array<[string, Record<string, unknown>]>) {
    out.push(`Mode ${mode}:`);
    if (!m.level) {
      out.push(`  not enforceable here: ${m.missing}`);
      continue;
    }
    out.push(`  writable:   ${(m.writable_roots as string[]).join(", ")} (+ devices and the tty)`);
    if ((m.read_only_under_writable as string[]).length) out.push(`  read-only:  ${(m.read_only_under_writable as string[]).join(", ")}`);
    out.push(`  unreadable: ${(m.deny_read as string[]).join(", ")}`);
    out.push(`  network:    ${m.network}`);
  }
  const n = report.network;
  out.push(`Network: ${n.mode}${n.mode === "allowlist" ? " (only through agent-shell's proxy; a name nobody allowed is asked about, or refused)" : ""}`);
  if (n.mode === "allowlist") {
    out.push(`  allowed:    ${n.allow.length ? n.allow.join(", ") : "(none listed)"}`);
    out.push(`  built in:   ${n.built_in.length ? n.built_in.join(", ") : "(dropped: network_allow_defaults = false)"}`);
    out.push(`  denied:     ${n.deny.length ? n.deny.join(", ") : "(none)"}`);
    out.push(`  forwarded:  ${n.forward.length ? n.forward.join(", ") : "(none)"}`);
    out.push(`  published:  ${n.publish ? "ports commands listen on, on the host's 127.0.0.1" : "no (network_publish = false)"}`);
  }
  out.push("Mode off: no containment.");
  if (report.not_held.length) out.push(`Not held at the ${level} level:`, ...report.not_held.map((g) => `  - ${g}`));
  if (report.sandbox_writable_not_in_force.length) out.push("Not in force:", ...report.sandbox_writable_not_in_force.map((p) => `  - ${p}`));
  process.stdout.write(out.join("\n") + "\n");
  return 0;
}

/** The network by name as configured (SPEC §21). */
function networkReport(config: ReturnType<typeof loadConfig>["config"]) {
  return {
    mode: networkMode(config),
    allow: config.network_allow,
    built_in: config.network_allow_defaults ? [...DEFAULT_ALLOW] : [],
    deny: config.network_deny,
    forward: config.network_forward,
    publish: config.network_publish,
  };
}
