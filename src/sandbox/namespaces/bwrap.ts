import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { ownDeviceNodes } from "./devices.ts";
import { gitProtection } from "../planted/git-guard.ts";
import { join } from "node:path";
import type { SandboxPolicy } from "../policy.ts";
import { under } from "../roots.ts";

/**
 * The "namespaces" level: bubblewrap builds a mount namespace in which `/` is a read-only
 * view of the host, the writable roots are bound back writable, secrets and agent-shell's
 * state are covered (files by a mode-000 file, folders by an empty one that cannot be
 * entered), and a PID namespace holds the sandbox's commands;
 * it is built once per policy and kept (runtime/containment/kept-sandbox.ts). Commands entering it drop
 * every capability (root included: without CAP_DAC_OVERRIDE a mode-000 mount really gives
 * EACCES), so they cannot undo any of it.
 */

/** What the start check prints when the working directory was swapped (spawn-helper/agent-shell-helper.c says it); the bash tool turns it into ACCESS_DENIED. */
export const CWD_REPLACED_MESSAGE = "agent-shell: the working directory was replaced (e.g. by a symlink) while the command was starting; it did not run";

export interface BwrapProbe {
  path: string;
}

/** bwrap on PATH and able to build the namespaces we use, or why not. */
export function probeBwrap(): BwrapProbe | { error: string } {
  const path = bwrapPath();
  if (typeof path !== "string") return path;
  const trial = Bun.spawnSync(trialArgv(path), { stdout: "pipe", stderr: "pipe" });
  return probeResult(path, trial.exitCode, trial.stderr.toString());
}

/** probeBwrap without blocking: a server starts it first thing, beside loading its modules. */
export async function probeBwrapAsync(): Promise<BwrapProbe | { error: string }> {
  const path = bwrapPath();
  if (typeof path !== "string") return path;
  const trial = Bun.spawn(trialArgv(path), { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(trial.stderr).text(), trial.exited]);
  return probeResult(path, code, stderr);
}

/** What `bwrap --version` says (for `sandbox check`; a server has no use for it). */
export function bwrapVersion(path: string): string {
  return Bun.spawnSync([path, "--version"], { stdout: "pipe", stderr: "pipe" }).stdout.toString().trim();
}

function bwrapPath(): string | { error: string } {
  // AGENT_SHELL_BWRAP: which bwrap to use (a testing/diagnostic knob, like AGENT_SHELL_SANDBOX_LEVEL).
  const override = process.env.AGENT_SHELL_BWRAP;
  const path = override ? (existsSync(override) ? override : null) : (Bun.which("bwrap") ?? (existsSync("/usr/bin/bwrap") ? "/usr/bin/bwrap" : null));
  return path ?? { error: `bubblewrap (bwrap) is not installed${override ? ` at ${override}` : ""} (apt-get install bubblewrap)` };
}

/** A sandbox as small as ours can be: whether this kernel lets bwrap build the namespaces. */
function trialArgv(path: string): string[] {
  return [path, ...namespaceFlags(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"];
}

function probeResult(path: string, trialCode: number | null, trialStderr: string): BwrapProbe | { error: string } {
  if (trialCode !== 0) return { error: `bwrap cannot create user/mount/pid namespaces here: ${trialStderr.trim() || `exit ${trialCode}`}` };
  return { path };
}

/** root needs no user namespace to mount (and skipping it is cheaper); anyone else does. */
function namespaceFlags(): string[] {
  // No --die-with-parent: a background task must outlive a crashed server or daemon, to be
  // recovered (SPEC §5); the watchdog and the group kill reach the namespace's init instead.
  // An IPC namespace of its own: SysV queues and shared memory outside are out of reach (SPEC §26).
  const flags = ["--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL"];
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

/**
 * The hidden paths that exist now (and whether each is a directory): what the mounts
 * covering them look like. Nothing can create one of them from inside, but one created
 * outside after a sandbox was built is not covered in it (sandboxSignature tells).
 */
export function hiddenPaths(policy: SandboxPolicy, cwd: string): { path: string; directory: boolean }[] {
  const found: { path: string; directory: boolean }[] = [];
  for (const p of policy.denyRead) {
    // Hiding the directory the command starts in would leave it nowhere (e.g. `run --cwd <state dir>`).
    if (under(cwd, p)) continue;
    // (No exception for a path that is not there: most are not, and this runs for every command.)
    const st = statSync(p, { throwIfNoEntry: false });
    if (st) found.push({ path: p, directory: st.isDirectory() });
  }
  return found;
}

/**
 * The argv with which bwrap builds `policy`'s kept sandbox (runtime/containment/kept-sandbox.ts) around
 * `first`, its pid 1 (the spawn helper's `hold`), reporting that process's host pid on
 * `infoFd`. The runtime starts it in `/` with the launcher environment; commands enter it
 * later, each with its own working directory and environment (runtime/spawn-helper/), so
 * nothing a call sets can change how bwrap itself runs (SPEC §20). `cwd` is the directory the
 * commands start in, which is not hidden even when a hidden path holds it.
 */
export function keptSandboxCommand(bwrap: string, policy: SandboxPolicy, first: string[], opts: { cwd: string; stateRoot: string; infoFd: number }): string[] {
  const args = [bwrap, ...namespaceFlags(), "--as-pid-1", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  for (const [node, path] of ownDeviceNodes(opts.stateRoot)) args.push("--dev-bind", node, path);
  if (!policy.network) args.push("--unshare-net"); // a fresh namespace whose only interface is its own loopback
  for (const root of policy.writableRoots) args.push("--bind", root, root);
  const git = gitProtection(policy.workspaceRoots);
  for (const p of git.pin) args.push("--bind", p, p);
  for (const p of [...git.readOnly, ...policy.readOnlyUnderWritable]) args.push("--ro-bind", p, p);
  let empty: string | null = null;
  for (const hidden of hiddenPaths(policy, opts.cwd)) {
    // An empty directory one may list but not enter: walking the home (`find ~`, `du ~`) works as
    // outside, while opening anything beneath still fails with a permission error (SPEC §11, §25).
    if (hidden.directory) args.push("--perms", "0444", "--tmpfs", hidden.path, "--remount-ro", hidden.path);
    else args.push("--ro-bind", (empty ??= emptyFile(opts.stateRoot)), hidden.path);
  }
  args.push("--info-fd", String(opts.infoFd), "--chdir", "/", "--", ...first);
  return args;
}
