import { blockedOnInput } from "./input-blocked.ts";
import { pinCwd } from "./pinned-cwd.ts";
import { closeSync, openSync } from "node:fs";
import { createPipe } from "./pipes.ts";
import { childPids, groupAlive, memberAlive, signalGroup } from "./process-group.ts";
import type { ExitStatus, SpawnSpec } from "./types.ts";
import { TaskCgroup } from "./task-cgroup.ts";
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
  const cwd = pinCwd(spec.cwd);
  let proc: Bun.Subprocess;
  try {
    const argv = spec.argv ?? ["bash", "-c", spec.command];
    if (spec.sandbox?.level === "namespaces") {
      proc = spawnSandboxed(spec, argv, stdio, cwd); // its PID namespace holds everything it starts
    } else {
      // Without a PID namespace, the task's own cgroup (where there is one) holds it all.
      const spawned = TaskCgroup.spawnInside(() =>
        spec.sandbox ? spawnSandboxed(spec, argv, stdio, cwd) : Bun.spawn(argv, { ...stdio, cwd: cwd.path, env: spec.env, detached: true } as never),
      );
      proc = spawned.child;
      if (spawned.cgroup) cgroups.set(proc, spawned.cgroup);
    }
  } finally {
    cwd.release();
  }
  watchdog().track(proc.pid);
  return proc;
}

/** The task cgroup of each unsandboxed child that got one. */
const cgroups = new WeakMap<Bun.Subprocess, TaskCgroup>();

/** A child moved into its task cgroup after it started (a launcher started ahead, warm-launcher.ts). */
export function adoptIntoCgroup(proc: Bun.Subprocess, cgroup: TaskCgroup): void {
  cgroups.set(proc, cgroup);
}

/**
 * bwrap gets the pinned directory as fd 3 (it checks the command really starts there) and
 * a pipe as fd 4 on which it reports its namespace init's pid (for a cheap liveness check).
 */
function spawnSandboxed(spec: SpawnSpec, argv: string[], stdio: StdioOptions, cwd: { path: string; fd: number | null }): Bun.Subprocess {
  const pinFd = cwd.fd ?? openSync("/dev/null", "r");
  try {
    const pin = cwd.fd !== null ? { fd: 3, shell: spec.argv === undefined } : undefined;
    const wrapped = spec.sandbox!.wrap(argv, spec.cwd, spec.env, { pin, infoFd: 4, tty: spec.tty !== undefined });
    // The Landlock launcher execs the command itself: its exit status and group are the usual ones.
    if (spec.sandbox!.level === "landlock") {
      return Bun.spawn(wrapped.argv, { ...withFds(stdio, [pinFd]), cwd: cwd.path, env: wrapped.env, detached: true } as never);
    }
    return spawnBwrap(wrapped, stdio, pinFd, cwd.path);
  } finally {
    if (cwd.fd === null) closeSync(pinFd);
  }
}

/** Bun spawn options passing `extra` as the child's fds 3, 4, … after its stdio. */
function withFds(stdio: StdioOptions, extra: number[]): object {
  const { stdin, stdout, stderr, ...rest } = stdio;
  return { ...rest, stdio: [stdin ?? (stdio.terminal ? null : "ignore"), stdout ?? null, stderr ?? null, ...extra] };
}

/**
 * Starts a bwrap command line with `fd3` as its fd 3. Made with `--info-fd 4`
 * (`reportsInit`), it tells the host pid of its namespace init on fd 4; the child leads
 * its own session.
 */
export function spawnBwrap(wrapped: { argv: string[]; env: Record<string, string> }, stdio: StdioOptions, fd3: number, cwd: string, reportsInit = true): Bun.Subprocess {
  const state = { init: null as number | null };
  if (!reportsInit) {
    const proc = Bun.spawn(wrapped.argv, { ...withFds(stdio, [fd3]), cwd, env: wrapped.env, detached: true } as never);
    sandboxed.set(proc, state);
    return proc;
  }
  const [infoR, infoW] = createPipe();
  let proc: Bun.Subprocess;
  try {
    proc = Bun.spawn(wrapped.argv, { ...withFds(stdio, [fd3, infoW]), cwd, env: wrapped.env, detached: true } as never);
  } catch (e) {
    closeSync(infoR);
    throw e;
  } finally {
    closeSync(infoW);
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
