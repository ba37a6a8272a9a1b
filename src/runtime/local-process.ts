import { blockedOnInput } from "./input-blocked.ts";
import { pinCwd } from "./pinned-cwd.ts";
import { closeSync, openSync } from "node:fs";
import { createPipe, pipeOf, writeAndClose } from "./pipes.ts";
import { LAUNCHER, launchScript, launcherStartEnv } from "./launch-script.ts";
import { launcherEnv } from "./env.ts";
import { seccompProgram } from "../sandbox/seccomp/filter.ts";
import type { SandboxRun } from "../sandbox/setup.ts";
import { gitState, undoGitPlants } from "../sandbox/git-guard.ts";
import { childPids, groupAlive, memberAlive, signalGroup } from "./process-group.ts";
import type { ExitStatus, SpawnSpec } from "./types.ts";
import { TaskCgroup } from "./task-cgroup.ts";
import { PidsLimit } from "./pids-limit.ts";
import { watchdog } from "./watchdog.ts";
import { sandboxedExit } from "../sandbox/exit-status.ts";

/**
 * Children started inside a sandbox: their exit status comes through bwrap (128+N for
 * signal N), and the host pid of their pid-namespace init once bwrap has reported it.
 */
const sandboxed = new WeakMap<Bun.Subprocess, { init: number | null }>();

/** Where the child's stdio goes: pipe fds, or a pseudo-terminal (Bun's `terminal` option). */
export interface StdioOptions {
  stdin?: number | "ignore";
  stdout?: number;
  stderr?: number;
  terminal?: object;
}

/**
 * Starts a local child the one way every local runtime does: `bash -c` (or the argv),
 * its own session (`detached`), in the validated working directory held open, and
 * registered with the watchdog before anything else can happen.
 */
export function spawnChild(spec: SpawnSpec, stdio: StdioOptions): Bun.Subprocess {
  let proc: Bun.Subprocess;
  const argv = spec.argv ?? ["bash", "-c", spec.command];
  if (spec.sandbox?.level === "namespaces") {
    // Its PID namespace holds everything it starts; its pids cgroup, how many at once.
    const started = PidsLimit.spawnInside(() => startInsideBwrap(spec, stdio));
    proc = started.child;
    if (started.limit) limits.set(proc, started.limit);
  } else {
    const cwd = pinCwd(spec.cwd);
    try {
      // Without a PID namespace, the task's own cgroup (where there is one) holds it all.
      const spawned = TaskCgroup.spawnInside(() =>
        PidsLimit.spawnInside(() =>
          spec.sandbox ? spawnLandlocked(spec, argv, stdio, cwd) : Bun.spawn(argv, { ...stdio, cwd: cwd.path, env: spec.env, detached: true } as never),
        ),
      );
      proc = spawned.child.child;
      if (spawned.cgroup) cgroups.set(proc, spawned.cgroup);
      if (spawned.child.limit) limits.set(proc, spawned.child.limit);
    } finally {
      cwd.release();
    }
  }
  watchdog().track(proc.pid);
  if (spec.sandbox) undoGitPlantsAtExit(proc, spec.sandbox);
  return proc;
}

/** A sandboxed command's plants in git's control files are undone when it ends (sandbox/git-guard.ts). */
export function undoGitPlantsAtExit(proc: Bun.Subprocess, run: SandboxRun): void {
  const roots = run.policy.workspaceRoots;
  const before = gitState(roots);
  void proc.exited.then(() => undoGitPlants(roots, before));
}

/** The task cgroup of each unsandboxed child that got one. */
const cgroups = new WeakMap<Bun.Subprocess, TaskCgroup>();

/** The process limit of each child that got one (pids-limit.ts). */
const limits = new WeakMap<Bun.Subprocess, PidsLimit>();

/** A child moved into its task cgroup and process limit after it started (a launcher started ahead, warm-launcher.ts). */
export function adoptIntoCgroup(proc: Bun.Subprocess, cgroup: TaskCgroup | null, limit: PidsLimit | null): void {
  if (cgroup) cgroups.set(proc, cgroup);
  if (limit) limits.set(proc, limit);
}



/**
 * namespaces level: bwrap starts a launcher, which is then told the command (its working
 * directory, environment and argv) through its script pipe.
 */
function startInsideBwrap(spec: SpawnSpec, stdio: StdioOptions): Bun.Subprocess {
  const [scriptR, scriptW] = createPipe();
  let proc: Bun.Subprocess;
  try {
    proc = spawnBwrap(spec.sandbox!.wrap(LAUNCHER, { cwd: spec.cwd, info: true, tty: spec.tty !== undefined }), spec.sandbox!, stdio, scriptR, true);
  } catch (e) {
    closeSync(scriptW);
    throw e;
  } finally {
    closeSync(scriptR);
  }
  writeAndClose(scriptW, launchScript(spec, launcherStartEnv()));
  return proc;
}

/**
 * Landlock level: the launcher (this executable) restricts itself and execs the command. It
 * starts in the pinned working directory (fd 3) with the launcher environment; the command's
 * environment comes on fd 4.
 */
function spawnLandlocked(spec: SpawnSpec, argv: string[], stdio: StdioOptions, cwd: { path: string; fd: number | null }): Bun.Subprocess {
  const pinFd = cwd.fd ?? openSync("/dev/null", "r");
  const [envR, envW] = createPipe();
  try {
    const proc = Bun.spawn(spec.sandbox!.wrap(argv, { cwd: spec.cwd, info: false }), { ...withFds(stdio, [pinFd, envR]), cwd: cwd.path, env: launcherEnv(), detached: true } as never);
    writeAndClose(envW, Object.entries(spec.env).map(([k, v]) => `${k}=${v}\0`).join(""));
    return proc;
  } catch (e) {
    closeSync(envW);
    throw e;
  } finally {
    closeSync(envR);
    if (cwd.fd === null) closeSync(pinFd);
  }
}

/** Bun spawn options passing `extra` as the child's fds 3, 4, … after its stdio. */
function withFds(stdio: StdioOptions, extra: number[]): object {
  const { stdin, stdout, stderr, ...rest } = stdio;
  return { ...rest, stdio: [stdin ?? (stdio.terminal ? null : "ignore"), stdout ?? null, stderr ?? null, ...extra] };
}

/**
 * Starts a bwrap command line (SandboxRun.wrap) with `script` as its fd 3 and the seccomp
 * filter as fd 4. Made with `info` (`reportsInit`), it tells the host pid of its namespace
 * init on fd 5; the child leads its own session.
 */
export function spawnBwrap(argv: string[], run: SandboxRun, stdio: StdioOptions, script: number, reportsInit: boolean): Bun.Subprocess {
  const env = launcherStartEnv();
  const state = { init: null as number | null };
  const seccomp = pipeOf(seccompProgram({ allowUnixSockets: run.policy.allowUnixSockets.length > 0 }));
  const opened = [seccomp];
  try {
    if (!reportsInit) {
      const proc = Bun.spawn(argv, { ...withFds(stdio, [script, seccomp]), cwd: "/", env, detached: true } as never);
      sandboxed.set(proc, state);
      return proc;
    }
    const [infoR, infoW] = createPipe();
    opened.push(infoW);
    let proc: Bun.Subprocess;
    try {
      proc = Bun.spawn(argv, { ...withFds(stdio, [script, seccomp, infoW]), cwd: "/", env, detached: true } as never);
    } catch (e) {
      closeSync(infoR);
      throw e;
    }
    sandboxed.set(proc, state);
    void Bun.file(infoR)
      .text()
      .then((text) => {
        const pid = Number(/"child-pid":\s*(\d+)/.exec(text)?.[1]);
        if (pid > 0) state.init = pid;
      })
      .catch(() => {})
      .finally(() => {
        try {
          closeSync(infoR);
        } catch {}
      });
    return proc;
  } finally {
    for (const fd of opened) closeSync(fd);
  }
}

/**
 * For a bwrap started without `--info-fd`: its namespace init is its only child, once
 * cloned. (A bwrap whose info pipe reader has died dies of SIGPIPE before it releases its
 * child, which then waits forever; a launcher started ahead must not depend on the server
 * living through its start.)
 */
export function learnSandboxInit(proc: Bun.Subprocess): void {
  const state = sandboxed.get(proc);
  if (state && !state.init) state.init = childPids(proc.pid)[0] ?? null;
}

/**
 * What every local child has in common, piped or on a terminal: it leads its own session
 * and process group (pgid = pid), is signalled as a group, and is watched through /proc.
 */
export abstract class LocalProcess {
  readonly pid: number;
  readonly pgid: number;
  readonly exited: Promise<ExitStatus>;
  private leaderExited = false;
  private readonly sandbox?: { init: number | null };
  private readonly cgroup?: TaskCgroup;
  /** Released with the handle (dispose): its folder goes once the task's last process has. */
  protected readonly limit?: PidsLimit;

  /**
   * `sessionJobs` (a terminal): a PTY shell puts each job in a process group of its own (same session),
   * which only a /proc scan finds where no task cgroup holds them.
   */
  constructor(
    proc: Bun.Subprocess,
    private readonly sessionJobs = false,
  ) {
    this.pid = proc.pid;
    this.pgid = proc.pid;
    this.sandbox = sandboxed.get(proc);
    this.cgroup = cgroups.get(proc);
    this.limit = limits.get(proc);
    this.exited = proc.exited.then(() => {
      this.leaderExited = true;
      const status = { code: proc.signalCode ? null : proc.exitCode, signal: (proc.signalCode as string | null) ?? null };
      return this.sandbox ? sandboxedExit(status.code, status.signal) : status;
    });
  }

  signal(signal: NodeJS.Signals): void {
    // A sandbox still being built would lose a SIGTERM: bwrap's monitor dies of it, its
    // namespace init ignores it, and the command, forked after it, never sees it (and the
    // kill then waits out its grace). Nothing of the command has run yet: end it outright.
    if (signal === "SIGTERM" && this.sandbox && !this.sandboxCommandForked()) signal = "SIGKILL";
    if (this.cgroup || (this.sandbox && !this.sessionJobs)) {
      // The group, and what left it (setsid, a double fork): the task's cgroup or pid
      // namespace holds that, so no /proc scan is needed (a hundred kills would share ~7 ms scans).
      try {
        process.kill(-this.pgid, signal);
      } catch {}
      this.cgroup?.signal(signal);
      return;
    }
    signalGroup(this.pgid, signal);
  }

  /** Whether bwrap's namespace init has forked the command yet (it has a child). */
  private sandboxCommandForked(): boolean {
    const init = this.sandbox?.init;
    return !!init && childPids(init).length > 0;
  }

  async groupAlive(): Promise<boolean> {
    // While the leader runs the group is alive: no need to scan /proc.
    if (!this.leaderExited) return true;
    // Sandboxed: everything the command started lives in the pid namespace, which ends
    // with its init; only the init needs a look (its zombie may linger, PID 1 reaps lazily).
    const init = this.sandbox?.init;
    if (init) return memberAlive(init, this.pgid);
    if (!this.cgroup) return groupAlive(this.pgid);
    // The cgroup holds the whole task, born inside it: the kernel's word is enough (SPEC §14).
    // (The group's word is not: its exited members stay zombies until PID 1 reaps them, and
    // telling them apart takes a scan of /proc, ~5 ms with a few hundred processes.)
    if (this.cgroup.members().length > 0) return true;
    this.cgroup.release(); // empty: nothing of the task is left
    return false;
  }

  blockedOnInput(): boolean | null {
    return blockedOnInput(this.pgid);
  }
}
