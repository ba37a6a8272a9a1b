import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import type { SandboxPolicy } from "./policy.ts";

/**
 * The "namespaces" level: bubblewrap builds a mount namespace in which `/` is a read-only
 * view of the host, the writable roots are bound back writable, secrets and agent-shell's
 * state are covered by mode-000 mounts, and a PID namespace holds everything the command
 * starts. Capabilities are dropped (root included: without CAP_DAC_OVERRIDE a mode-000
 * mount really gives EACCES), so the command cannot undo any of it.
 */

export interface BwrapProbe {
  path: string;
  version: string;
}

/** bwrap on PATH and able to build the namespaces we use, or why not. */
export function probeBwrap(): BwrapProbe | { error: string } {
  // AGENT_SHELL_BWRAP: which bwrap to use (a testing/diagnostic knob, like AGENT_SHELL_SANDBOX_LEVEL).
  const override = process.env.AGENT_SHELL_BWRAP;
  const path = override ? (existsSync(override) ? override : null) : (Bun.which("bwrap") ?? (existsSync("/usr/bin/bwrap") ? "/usr/bin/bwrap" : null));
  if (!path) return { error: `bubblewrap (bwrap) is not installed${override ? ` at ${override}` : ""} (apt-get install bubblewrap)` };
  const version = Bun.spawnSync([path, "--version"], { stdout: "pipe", stderr: "pipe" }).stdout.toString().trim();
  const trial = Bun.spawnSync([path, ...namespaceFlags(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"], { stdout: "pipe", stderr: "pipe" });
  if (trial.exitCode !== 0) {
    const why = trial.stderr.toString().trim() || `exit ${trial.exitCode}`;
    return { error: `bwrap cannot create user/mount/pid namespaces here: ${why}` };
  }
  return { path, version };
}

/** root needs no user namespace to mount (and skipping it is cheaper); anyone else does. */
function namespaceFlags(): string[] {
  // No --die-with-parent: a background task must outlive a crashed server or daemon, to be
  // recovered (SPEC §5); the watchdog and the group kill reach the namespace's init instead.
  const flags = ["--unshare-pid", "--cap-drop", "ALL"];
  if (process.getuid?.() !== 0) flags.unshift("--unshare-user");
  return flags;
}

/**
 * A mode-000 empty file to mount over secret files. It lives in agent-shell's state dir,
 * which the sandbox hides, so no command can change its mode.
 */
function emptyFile(stateRoot: string): string {
  const path = join(stateRoot, "sandbox-empty");
  if (!existsSync(path)) {
    mkdirSync(stateRoot, { recursive: true, mode: 0o700 });
    closeSync(openSync(path, "a", 0o000));
  }
  chmodSync(path, 0o000);
  return path;
}

/** argv that runs `argv` under bwrap with `policy`, starting in `cwd` (already validated). */
export function bwrapCommand(bwrap: string, policy: SandboxPolicy, argv: string[], opts: { cwd: string; stateRoot: string }): string[] {
  const args = [bwrap, ...namespaceFlags(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  if (!policy.network) args.push("--unshare-net"); // a fresh namespace whose only interface is its own loopback
  for (const root of policy.writableRoots) args.push("--bind", root, root);
  for (const p of policy.readOnlyUnderWritable) args.push("--ro-bind", p, p);
  let empty: string | null = null;
  for (const p of policy.denyRead) {
    // Hiding the directory the command starts in would leave it nowhere (e.g. `run --cwd <state dir>`).
    if (opts.cwd === p || opts.cwd.startsWith(p + "/")) continue;
    let st;
    try {
      st = statSync(p);
    } catch {
      continue; // nothing there to hide (and nothing can create it outside the writable roots)
    }
    if (st.isDirectory()) args.push("--perms", "0000", "--tmpfs", p);
    else args.push("--ro-bind", (empty ??= emptyFile(opts.stateRoot)), p);
  }
  // bwrap starts in the pinned directory (/proc/self/fd/N) and enters the validated path by name:
  // a directory swapped for a symlink within those ~2 ms is entered through the symlink
  // (README, limitations); the command still runs inside the sandbox.
  args.push("--chdir", opts.cwd, "--", ...argv);
  return args;
}
