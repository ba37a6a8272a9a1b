import { closeSync, openSync, writeSync } from "node:fs";
import { sandboxSignature } from "../sandbox/bwrap.ts";
import { launcherEnv } from "./env.ts";
import { BASH, LAUNCHER, launchScript, launcherStartEnv } from "./launch-script.ts";
import type { SandboxRun } from "../sandbox/setup.ts";
import { adoptIntoCgroup, learnSandboxInit, spawnBwrap, undoGitPlantsAtExit } from "./local-process.ts";
import { createPipe, writeAndClose } from "./pipes.ts";
import { signalGroup } from "./process-group.ts";
import { TaskCgroup } from "./task-cgroup.ts";
import { PidsLimit } from "./pids-limit.ts";
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

/**
 * The Landlock level's launcher, made ahead because that level's own launcher is a
 * re-execution of this binary (~15 ms; the far side's usual level inside containers, SPEC
 * §16). It gets its script on stdin: `__sandbox-exec` passes only fds 0–2 on to what it
 * becomes, so it serves only commands with no stdin; the others start the usual way.
 */
const LANDLOCK_LAUNCHER = [BASH, "--noprofile", "--norc", "-c", ". /dev/stdin; exit 125"];

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
  /** False while the launcher is still being moved into its task cgroup or process limit. */
  ready: boolean;
  cgroup: TaskCgroup | null;
  limit: PidsLimit | null;
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
/** A pipe holds 64 KiB: a larger script would block the claim until the launcher reads. */
const MAX_SCRIPT = 60 * 1024;

/** A launcher made ready for `spec` with `spec`'s command started in it, or null (start it the usual way). */
export function claimWarmLauncher(spec: SpawnSpec): ClaimedLauncher | null {
  if (spec.argv || spec.tty) return null;
  const ahead = spec.sandbox && (spec.sandbox.level === "namespaces" || (spec.sandbox.level === "landlock" && spec.stdin === null));
  const kind: Kind | null = spec.sandbox ? (ahead ? spec.sandbox : null) : TaskCgroup.available() ? UNSANDBOXED : null;
  if (kind === null) return null;
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
  const script = launchScript(spec, found.env);
  if (Buffer.byteLength(script) > MAX_SCRIPT || !running(found.proc) || found.hidden !== signature(kind, spec.cwd)) {
    discard(found);
    schedule(kind);
    return null;
  }
  // The replacement is started once this command has ended: one starting beside the
  // command slows both (the spare one serves a call that comes meanwhile).
  void found.proc.exited.then(() => schedule(kind));
  if (kind !== UNSANDBOXED) undoGitPlantsAtExit(found.proc, kind); // its state before the command runs
  try {
    writeSync(found.request, script);
  } catch {
    discard(found);
    return null;
  } finally {
    closeQuietly(found.request);
  }
  adoptIntoCgroup(found.proc, found.cgroup, found.limit);
  if (!found.cgroup) learnSandboxInit(found.proc);
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
  const limit = PidsLimit.create();
  try {
    const [stdinR, stdinW] = createPipe();
    const [outR, outW] = createPipe();
    const [errR, errW] = createPipe();
    const [reqR, reqW] = createPipe();
    opened.push(stdinR, stdinW, outR, outW, errR, errW, reqR, reqW);
    const stdio = { stdin: stdinR, stdout: outW, stderr: errW };
    let proc: Bun.Subprocess;
    const env = launcherStartEnv();
    if (kind === UNSANDBOXED) {
      cgroup = TaskCgroup.create();
      if (!cgroup) throw new Error("no task cgroup");
      proc = Bun.spawn(LAUNCHER, { stdio: [stdinR, outW, errW, reqR], cwd: "/", env, detached: true });
    } else if (kind.level === "landlock") {
      // No pid namespace at this level: as for a direct start, the task's own cgroup holds it where there is one.
      cgroup = TaskCgroup.available() ? TaskCgroup.create() : null;
      const [envR, envW] = createPipe();
      const devNull = openSync("/dev/null", "r");
      opened.push(envR, envW, devNull);

      // fd 3 stands for the pinned directory; fd 4 gives the launcher's own environment (exec.ts).
      proc = Bun.spawn(kind.wrap(LANDLOCK_LAUNCHER, { cwd: "/", info: false }), { stdio: [reqR, outW, errW, devNull, envR], cwd: "/", env: launcherEnv(), detached: true } as never);
      writeAndClose(envW, Object.entries(env).map(([k, v]) => `${k}=${v}\0`).join(""));
      for (const fd of [envR, devNull, stdinW]) closeQuietly(fd);
      opened.splice(0, opened.length, ...opened.filter((fd) => ![envR, envW, devNull, stdinW].includes(fd))); // closed: never again
    } else {
      proc = spawnBwrap(kind.wrap(LAUNCHER, { cwd: "/", info: false }), kind, stdio, reqR, false);
    }
    watchdog().track(proc.pid);
    for (const fd of [stdinR, outW, errW, reqR]) closeQuietly(fd); // the child has its copies
    const stdin = kind !== UNSANDBOXED && kind.level === "landlock" ? -1 : stdinW; // a Landlock launcher's commands read /dev/null
    const w: Warm = { kind, proc, hidden: signature(kind, "/"), env, ready: cgroup === null && limit === null, cgroup, limit, request: reqW, stdin, stdout: outR, stderr: errR };
    if (cgroup || limit) {
      // It waits on its script until claimed: placed before it is ready, it runs nothing outside.
      void Promise.all([cgroup?.place(proc.pid) ?? true, limit?.place(proc.pid) ?? true]).then(([inCgroup, limited]) => {
        if (inCgroup && limited) w.ready = true;
        else drop(w);
      });
    }
    return w;
  } catch (e) {
    for (const fd of opened) closeQuietly(fd);
    cgroup?.release();
    limit?.release();
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
    w.limit?.release();
  });
}

/** What a launcher's sandbox was built over (bwrap.ts sandboxSignature); unsandboxed ones have none. */
function signature(kind: Kind, cwd: string): string {
  return kind === UNSANDBOXED ? "" : sandboxSignature(kind.policy, cwd);
}

function running(proc: Bun.Subprocess): boolean {
  return proc.exitCode === null && proc.signalCode === null;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {}
}
