import { closeSync, statSync, writeSync } from "node:fs";
import { CWD_REPLACED_MESSAGE, hiddenPaths } from "../sandbox/bwrap.ts";
import type { SandboxRun } from "../sandbox/setup.ts";
import { adoptIntoCgroup, learnSandboxInit, spawnBwrap } from "./local-process.ts";
import { OWNER_MARKER, OWNER_TOKEN } from "./env.ts";
import { createPipe } from "./pipes.ts";
import { signalGroup } from "./process-group.ts";
import { TaskCgroup } from "./task-cgroup.ts";
import type { SpawnSpec } from "./types.ts";
import { watchdog } from "./watchdog.ts";

/**
 * Launchers started ahead of their command. Starting a command pays for work that does
 * not depend on the command: bwrap needs 3–6 ms to build a sandbox's namespaces and
 * mounts, and moving a process into its task cgroup (`--sandbox off`) waits for an RCU
 * grace period, ~10 ms when the machine was idle. So for each
 * policy (and for unsandboxed commands) a launcher waits, ready: a bash, inside its
 * sandbox or already in a task cgroup of its own, that sources its command from fd 3, a
 * pipe nothing is written to until a call claims it. The claim writes a short script
 * (enter and check the working directory, set the environment, exec the command) and
 * closes the pipe; the next launcher is then started in the background. Containment is
 * unchanged: every command still gets a sandbox (and pid namespace) or a task cgroup of
 * its own, only made earlier.
 *
 * Commands that cannot be expressed exactly this way start the usual way: an argv (no
 * shell), a terminal, a working directory under a hidden path, an environment variable
 * name bash cannot export, or a script too large for one pipe write.
 */

/** Unsandboxed commands: one more kind of launcher, kept like a policy's. */
const UNSANDBOXED = Symbol("unsandboxed");
type Kind = SandboxRun | typeof UNSANDBOXED;

interface Warm {
  kind: Kind;
  proc: Bun.Subprocess;
  /** What the sandbox was built over (signature()): a claim compares it with now. */
  hidden: string;
  /** The environment the launcher started with (launcherEnv()). */
  env: Record<string, string>;
  /** False while an unsandboxed launcher is still being moved into its task cgroup. */
  ready: boolean;
  cgroup: TaskCgroup | null;
  request: number;
  stdin: number;
  stdout: number;
  stderr: number;
}

export interface ClaimedLauncher {
  proc: Bun.Subprocess;
  stdout: number;
  stderr: number;
  /** The write end of the command's stdin; null when the spec has none (the command reads /dev/null). */
  stdin: number | null;
}

/**
 * Launchers kept per kind, most recently used kind last. Two, so back-to-back calls find
 * one ready while the next is started; a few kinds at most are in use at once.
 */
const PER_KIND = 2;
const MAX_KINDS = 4;
const warm = new Map<Kind, Warm[]>();
const scheduled = new Set<Kind>();
/** Set once the server closes: nothing is started after that. */
let closed = false;

/** How long after a claim or an exit the next launcher starts (measured: 3 ms beat 0, 1, 10 and 20 back to back). */
const START_DELAY_MS = 3;
/** How long after a cgroup move the next one is cheap (TaskCgroup.movedWithin). */
const CGROUP_MOVE_HOT_MS = 20;
/**
 * Names a launcher does not start with, though its command may have them: bash acts on them
 * when it starts (BASH_ENV is sourced, SHELLOPTS and POSIXLY_CORRECT change the shell,
 * SHLVL, PWD and OLDPWD are rewritten), so the claim sets them, as a direct start would.
 */
const SET_AT_CLAIM = new Set(["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "BASH_XTRACEFD", "BASH_COMPAT", "IFS", "PS4", "SHLVL", "PWD", "OLDPWD", "_"]);
/** The environment new launchers of each kind start with: their last command's (launcherEnv()). */
const envOfKind = new Map<Kind, Record<string, string>>();
/** bash by absolute path: a launcher's environment may have no PATH. */
const BASH = Bun.which("bash") ?? "/bin/bash";
/** The launcher: runs what the claim writes to fd 3; a pipe closed empty (the host died) ends it. */
const LAUNCHER = [BASH, "--noprofile", "--norc", "-c", ". /dev/fd/3; exit 125"];
/**
 * The Landlock level's launcher gets its script on stdin: `__sandbox-exec` passes only fds
 * 0–2 to what it becomes. Its command's stdin is then /dev/null, so only commands with no
 * stdin (the usual call) start in one; the others start the usual way.
 */
const LANDLOCK_LAUNCHER = [BASH, "--noprofile", "--norc", "-c", ". /dev/stdin; exit 125"];
/** A pipe holds 64 KiB: a larger script would block the claim until the launcher reads. */
const MAX_SCRIPT = 60 * 1024;
const EXPORTABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A launcher made ready for `spec` with `spec`'s command started in it, or null (start it the usual way). */
export function claimWarmLauncher(spec: SpawnSpec): ClaimedLauncher | null {
  if (spec.argv || spec.tty) return null;
  const kind: Kind | null = spec.sandbox ? (spec.sandbox.wrapAhead ? spec.sandbox : null) : TaskCgroup.available() ? UNSANDBOXED : null;
  if (kind === null || (isLandlock(kind) && spec.stdin !== null)) return null;
  if (Object.keys(spec.env).every((name) => EXPORTABLE.test(name))) envOfKind.set(kind, launcherEnv(spec.env));
  const ready = warm.get(kind) ?? [];
  warm.delete(kind);
  warm.set(kind, ready); // most recently used last
  // Right after a cgroup move another one is cheap: the usual start is then the faster.
  const at = kind === UNSANDBOXED && TaskCgroup.movedWithin(CGROUP_MOVE_HOT_MS) ? -1 : ready.findIndex((w) => w.ready);
  if (at < 0) {
    schedule(kind);
    return null;
  }
  const [found] = ready.splice(at, 1) as [Warm];
  const script = launchScript(spec, found.env, isLandlock(kind) ? "exec 0</dev/null" : "exec 3<&- 4>&-");
  if (script === null || !running(found.proc) || found.hidden !== signature(kind, spec.cwd)) {
    discard(found);
    schedule(kind);
    return null;
  }
  // The replacement is started once this command has ended: one starting beside the
  // command slows both (the spare one serves a call that comes meanwhile).
  void found.proc.exited.then(() => schedule(kind));
  try {
    writeSync(found.request, script);
  } catch {
    discard(found);
    return null;
  } finally {
    closeQuietly(found.request);
  }
  if (found.cgroup) adoptIntoCgroup(found.proc, found.cgroup);
  else learnSandboxInit(found.proc);
  let stdin: number | null = found.stdin;
  if (spec.stdin === null) {
    closeQuietly(found.stdin);
    stdin = null;
  }
  return { proc: found.proc, stdout: found.stdout, stderr: found.stderr, stdin };
}

/** Kills every launcher waiting for a command (the server is closing). */
export function closeWarmLaunchers(): void {
  closed = true;
  for (const list of warm.values()) for (const w of list) discard(w);
  warm.clear();
  scheduled.clear();
}

process.once("exit", closeWarmLaunchers);

function schedule(kind: Kind): void {
  if (closed || scheduled.has(kind)) return;
  scheduled.add(kind);
  // A moment later: the call that used the last launcher first sends its result.
  setTimeout(() => {
    if (!scheduled.delete(kind)) return;
    const ready = warm.get(kind);
    if (!ready) return;
    try {
      while (ready.length < PER_KIND) ready.push(start(kind));
    } catch {
      // could not start one: calls keep starting the usual way
    }
    if (warm.size > MAX_KINDS) {
      const [oldest, list] = warm.entries().next().value!;
      warm.delete(oldest);
      for (const w of list) discard(w);
    }
  }, START_DELAY_MS);
}

function start(kind: Kind): Warm {
  const opened: number[] = [];
  let cgroup: TaskCgroup | null = null;
  try {
    const [stdinR, stdinW] = createPipe();
    const [outR, outW] = createPipe();
    const [errR, errW] = createPipe();
    const [reqR, reqW] = createPipe();
    opened.push(stdinR, stdinW, outR, outW, errR, errW, reqR, reqW);
    const stdio = { stdin: stdinR, stdout: outW, stderr: errW };
    let proc: Bun.Subprocess;
    const env = envOfKind.get(kind) ?? launcherEnv({});
    if (kind === UNSANDBOXED) {
      cgroup = TaskCgroup.create();
      if (!cgroup) throw new Error("no task cgroup");
      proc = Bun.spawn(LAUNCHER, { stdio: [stdinR, outW, errW, reqR], cwd: "/", env, detached: true });
    } else if (isLandlock(kind)) {
      // No pid namespace at this level: as for a direct start, the task's own cgroup holds it where there is one.
      cgroup = TaskCgroup.available() ? TaskCgroup.create() : null;
      const wrapped = (kind as SandboxRun).wrapAhead!(LANDLOCK_LAUNCHER, env);
      proc = Bun.spawn(wrapped.argv, { stdio: [reqR, outW, errW], cwd: "/", env: wrapped.env, detached: true });
    } else {
      proc = spawnBwrap(kind.wrapAhead!(LAUNCHER, env), stdio, reqR, "/", false);
    }
    watchdog().track(proc.pid);
    for (const fd of [stdinR, outW, errW, reqR]) closeQuietly(fd); // the child has its copies
    const w: Warm = { kind, proc, hidden: signature(kind, "/"), env, ready: cgroup === null, cgroup, request: reqW, stdin: stdinW, stdout: outR, stderr: errR };
    if (cgroup) {
      void cgroup.place(proc.pid).then((placed) => {
        if (placed) w.ready = true;
        else drop(w);
      });
    }
    return w;
  } catch (e) {
    for (const fd of opened) closeQuietly(fd);
    cgroup?.release();
    throw e;
  }
}

/** Takes a launcher out of its list and kills it. */
function drop(w: Warm): void {
  const list = warm.get(w.kind);
  const at = list?.indexOf(w) ?? -1;
  if (at >= 0) list!.splice(at, 1);
  discard(w);
}

function discard(w: Warm): void {
  signalGroup(w.proc.pid, "SIGKILL");
  w.cgroup?.signal("SIGKILL");
  for (const fd of [w.request, w.stdin, w.stdout, w.stderr]) closeQuietly(fd);
  void w.proc.exited.then(() => {
    watchdog().untrack(w.proc.pid);
    w.cgroup?.release();
  });
}

/**
 * What a sandbox was built over: the hidden paths that existed, and which directory each
 * writable root was (a root removed and made again is a new directory; the sandbox would
 * still hold the old one).
 */
function signature(kind: Kind, cwd: string): string {
  if (kind === UNSANDBOXED) return "";
  const roots = kind.policy.writableRoots.map((root) => {
    try {
      const st = statSync(root);
      return `${st.dev}:${st.ino}:${st.birthtimeMs}`; // a new directory may reuse the inode number
    } catch {
      return "gone";
    }
  });
  return JSON.stringify([hiddenPaths(kind.policy, cwd), roots]);
}

function isLandlock(kind: Kind): boolean {
  return kind !== UNSANDBOXED && kind.level === "landlock";
}

function running(proc: Bun.Subprocess): boolean {
  return proc.exitCode === null && proc.signalCode === null;
}

/**
 * A launcher's own environment: its command's, less what bash acts on at start, and with the
 * owner marker, so that should the server die before the watchdog hears of the launcher,
 * the watchdog still finds it by that.
 */
function launcherEnv(env: Record<string, string>): Record<string, string> {
  const own: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (!SET_AT_CLAIM.has(name)) own[name] = value;
  own[OWNER_MARKER] = OWNER_TOKEN;
  return own;
}

/**
 * What the launcher sources: the environment exactly as a direct `bash -c` would get it
 * (bash's `exec` lowers SHLVL by one, so it is raised by one first; OLDPWD only if given).
 * Only what differs from the environment the launcher started with is written (exporting
 * costs bash ~15 µs a variable). The directory check is the one the direct start makes:
 * the path, all symlinks resolved, must still be the validated (canonical) one.
 */
function launchScript(spec: SpawnSpec, started: Record<string, string>, closeRequest: string): string | null {
  const lines = [
    closeRequest,
    `cd -P -- ${quote(spec.cwd)} 2>/dev/null && [ "$PWD" = ${quote(spec.cwd)} ] || { printf '%s\\n' ${quote(CWD_REPLACED_MESSAGE)} >&2; exit 126; }`,
  ];
  if (spec.stdin === null) lines.push("exec 0</dev/null");
  for (const name of Object.keys(started)) if (!(name in spec.env)) lines.push(`unset ${name}`);
  for (const [name, value] of Object.entries(spec.env)) {
    if (!EXPORTABLE.test(name)) return null;
    if (name !== "SHLVL" && started[name] !== value) lines.push(`export ${quote(`${name}=${value}`)}`);
  }
  if (spec.env.OLDPWD === undefined) lines.push("export -n OLDPWD");
  const level = spec.env.SHLVL;
  lines.push(level !== undefined && /^\d{1,6}$/.test(level) ? `export SHLVL=${Number(level) + 1}` : "export -n SHLVL");
  lines.push(`exec bash -c ${quote(spec.command)}`);
  const script = lines.join("\n") + "\n";
  return Buffer.byteLength(script) <= MAX_SCRIPT ? script : null;
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {}
}
