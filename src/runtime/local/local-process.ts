import { blockedOnInput } from "./input-blocked.ts";
import { seccompProgram } from "../../sandbox/seccomp/filter.ts";
import { landlockRuleset } from "../../sandbox/landlock/ruleset.ts";
import type { SandboxRun } from "../../sandbox/setup.ts";
import { guardPlants } from "../../sandbox/planted/plant-watch.ts";
import { groupAlive, liveMembers, signalGroup } from "../process-groups/process-group.ts";
import { sandboxPidOf } from "./process-info.ts";
import type { ExitStatus, SpawnSpec } from "../types.ts";
import { TaskCgroup } from "../containment/task-cgroup.ts";
import { PidsLimit } from "../containment/pids-limit.ts";
import { watchdog } from "../process-groups/watchdog.ts";
import { enterCall } from "../../sandbox/network/calls.ts";
import { signalName } from "../signal-names.ts";
import { type Kept, keptSandbox, namespacesOf } from "../containment/kept-sandbox.ts";
import { sendRequest, startHelper, type HelperPlan, type Restrictions, type StdioOptions } from "../spawn-helper/start.ts";

export type { StdioOptions } from "../spawn-helper/start.ts";

/**
 * What holds a task whole (SPEC §14): its cgroup (v2, `cgroup.kill`), else a pid namespace of
 * its own (its init's end ends everything in it), else only its process group; and its
 * process limit (SPEC §20).
 */
export interface Containment {
  cgroup: TaskCgroup | null;
  ownPidNamespace: boolean;
  limit: PidsLimit | null;
}

/** What LocalProcess needs of a child: a Bun.Subprocess, or a command a spawner started (ServedChild). */
export interface ChildProcess {
  readonly pid: number;
  readonly exited: Promise<unknown>;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | number | null;
  /** Set when its status can never be known (ServedChild). */
  readonly lost?: string | null;
}

/** A started child, and what holds it. */
export interface Started<P extends ChildProcess = ChildProcess> {
  proc: P;
  containment: Containment;
  /**
   * The watchdog was told its process group (watchdog.track). A command the kept spawner
   * cloned into its task cgroup is not: the watchdog ends every task cgroup of a host that
   * died, and a line to it wakes its bash, which takes the CPU from this server each time.
   */
  watched: boolean;
  /** Ends what guards the task while anything of it runs (its git guard): called once its last process is gone. */
  atTaskEnd?: () => void;
}

/**
 * Starts a local child through a spawn helper of its own (spawn-helper/), which puts it in
 * its process limit and task cgroup, enters its sandbox (a kept sandbox's namespaces, or
 * Landlock) and execs `bash -c` (or the argv) in the validated working directory with the
 * call's environment: terminals, and what the kept spawner cannot start (served-spawn.ts).
 * Registered with the watchdog before anything else can happen.
 */
export async function spawnChild(spec: SpawnSpec, stdio: StdioOptions): Promise<Started<Bun.Subprocess>> {
  const { plan, containment } = await planFor(spec.sandbox ?? null, spec.cwd);
  const endGitGuard = spec.sandbox ? gitPlantsUndo(spec) : undefined;
  let proc: Bun.Subprocess;
  try {
    const started = startHelper(plan, stdio);
    proc = started.proc;
    sendRequest(started.request, spec);
  } catch (e) {
    endGitGuard?.();
    releaseContainment(containment);
    throw e;
  }
  watchdog().track(proc.pid);
  return { proc, containment, watched: true, atTaskEnd: endGitGuard };
}

/**
 * The helper's plan for a command under `run` (null: unsandboxed) in `cwd`, with a new task
 * cgroup and process limit. A helper started with it runs nothing until it gets its request.
 */
async function planFor(run: SandboxRun | null, cwd: string): Promise<{ plan: HelperPlan; containment: Containment }> {
  const containment = newContainment();
  const { cgroup, limit } = containment;
  // Without a task cgroup, a sandboxed command gets a pid namespace of its own, which holds the task (SPEC §14).
  containment.ownPidNamespace = run?.level === "namespaces" && cgroup === null;
  try {
    const restrictions = await restrictionsFor(run, madeInNow(run, cwd), !containment.ownPidNamespace);
    return { plan: { pids: limit?.tasksFile ?? null, cgroup: cgroup?.path ?? null, ownPidNamespace: containment.ownPidNamespace, ...restrictions }, containment };
  } catch (e) {
    releaseContainment(containment);
    throw e;
  }
}

/**
 * What a command under `run` is restricted by, in what it is made in (madeInNow): no
 * capabilities, the seccomp filter, and the kept sandbox's namespaces (its pid namespace too
 * when `withPid`) or the Landlock ruleset.
 */
export async function restrictionsFor(run: SandboxRun | null, madeIn: unknown, withPid: boolean): Promise<Restrictions> {
  const restrictions: Restrictions = { namespaces: [], dropCapabilities: false, landlock: null, seccomp: null };
  if (!run) return restrictions;
  restrictions.dropCapabilities = true;
  restrictions.seccomp = seccompProgram({ allowUnixSockets: run.policy.allowUnixSockets.length > 0 });
  if (run.level === "namespaces") restrictions.namespaces = await namespacesOf(madeIn as Kept, withPid);
  else restrictions.landlock = madeIn as string;
  return restrictions;
}

/** A new task cgroup and process limit (each null where this machine offers none). */
export function newContainment(): Containment {
  return { cgroup: TaskCgroup.create(), limit: PidsLimit.create(), ownPidNamespace: false };
}

/** What a command under `run` in `cwd` is made in now: the kept sandbox, or the Landlock ruleset (a spawner serves it only if made in the same, served-spawn.ts). */
export function madeInNow(run: SandboxRun | null, cwd: string): unknown {
  if (!run) return null;
  return run.level === "namespaces" ? keptSandbox(run, cwd) : landlockRuleset(run.policy);
}

/** The task cgroup and limit of a child that never started (or has ended) go. */
export function releaseContainment(c: Containment): void {
  c.cgroup?.release();
  c.limit?.release();
}

/**
 * What a sandboxed command plants in git's control files and control files is undone while
 * anything of it runs (what it left running too, SPEC §25) and when it ends
 * (sandbox/planted/plant-watch.ts), reported in `spec.plantReport`; meanwhile the proxy of an
 * allowlist sandbox may ask its person about a name, and reports refusals to `spec.network`
 * (SPEC §21). The state they are compared with is taken now, before the command is sent
 * off (a burst of starts keeps this process busy for many milliseconds while commands run).
 * Returns what ends the guard: once the task's last process is gone (Started.atTaskEnd), or
 * at once for a command that never starts.
 */
export function gitPlantsUndo(spec: SpawnSpec): () => void {
  const run = spec.sandbox!;
  const endPlants = guardPlants(run.policy, run.level, spec.plantReport ?? { git: [], controls: [] });
  const leaveNetwork = run.policy.allowlist && spec.network ? enterCall(run.policy, spec.network) : null;
  return () => {
    leaveNetwork?.();
    endPlants();
  };
}

/**
 * What every local child has in common, piped or on a terminal: it leads its own session
 * and process group (pgid = pid: the command a spawner started, or a terminal's helper, which
 * ends exactly as the command does), is signalled as a group and through its cgroup, and is
 * watched through /proc.
 */
export abstract class LocalProcess {
  readonly pid: number;
  readonly pgid: number;
  readonly exited: Promise<ExitStatus>;
  private leaderExited = false;
  private readonly cgroup: TaskCgroup | null;
  private readonly ownPidNamespace: boolean;
  /** The watchdog knows its process group (Started.watched): told when it is gone (dispose). */
  protected readonly watched: boolean;
  /** Released with the handle (dispose): its folder goes once the task's last process has. */
  protected readonly limit: PidsLimit | null;
  /**
   * Its cgroup was found empty: so is its process limit (every process of the task was born in
   * both, and leaves both at its exit), which is then kept or removed without another read.
   */
  protected emptied = false;
  /** With a task cgroup, which holds all of the task and says when it empties (ProcessHandle.whenGone). */
  readonly whenGone?: (ms: number, hint?: Promise<unknown>) => Promise<boolean>;

  /**
   * `sessionJobs` (a terminal): a PTY shell puts each job in a process group of its own (same session),
   * which only a /proc scan finds where no task cgroup holds them.
   */
  /** Started.atTaskEnd, until called (taskGone). */
  private atTaskEnd?: () => void;

  constructor(
    { proc, containment, watched, atTaskEnd }: Started,
    private readonly sessionJobs = false,
  ) {
    this.atTaskEnd = atTaskEnd;
    this.pid = proc.pid;
    this.pgid = proc.pid;
    this.cgroup = containment.cgroup;
    this.ownPidNamespace = containment.ownPidNamespace;
    this.limit = containment.limit;
    this.watched = watched;
    const cgroup = containment.cgroup;
    if (cgroup) {
      // The leader's exit is a hint too: a lone process's end empties its cgroup.
      this.whenGone = (ms, hint) =>
        cgroup.whenEmpty(ms, [this.exited, ...(hint ? [hint] : [])]).then((empty) => {
          if (empty) this.emptied = true;
          return empty;
        });
    }
    this.exited = proc.exited.then(() => {
      this.leaderExited = true;
      if (proc.lost) return { code: null, signal: null, lost: proc.lost };
      return { code: proc.signalCode ? null : proc.exitCode, signal: proc.signalCode === null ? null : signalName(proc.signalCode) };
    });
  }

  signal(signal: NodeJS.Signals): void {
    if (this.cgroup || (this.ownPidNamespace && !this.sessionJobs)) {
      // The group, and what left it (setsid, a double fork): the task's cgroup or pid
      // namespace holds that, so no /proc scan is needed (a hundred kills would share ~7 ms scans).
      let groupSignalled = false;
      try {
        process.kill(-this.pgid, signal);
        groupSignalled = true;
      } catch {}
      this.cgroup?.signal(signal, groupSignalled ? this.pgid : undefined);
      return;
    }
    signalGroup(this.pgid, signal);
  }

  async groupAlive(): Promise<boolean> {
    // While the leader runs the group is alive: no need to scan /proc.
    if (!this.leaderExited) return true;
    // Its own pid namespace ended with its init, which the leader outlives.
    if (this.ownPidNamespace) return false;
    if (!this.cgroup) return groupAlive(this.pgid);
    // The cgroup holds the whole task, born inside it: the kernel's word is enough (SPEC §14).
    // (The group's word is not: its exited members stay zombies until PID 1 reaps them, and
    // telling them apart takes a scan of /proc, ~5 ms with a few hundred processes.) Once found
    // empty (a kill waits for that) it stays so: nothing can be born in an empty task cgroup.
    if (!this.emptied && this.cgroup.members().length > 0) return true;
    this.emptied = true;
    this.cgroup.release(true); // empty: nothing of the task is left
    return false;
  }

  /** Nothing of the task runs any more (or it was abandoned): what guarded it ends (from dispose). */
  protected taskGone(): void {
    const end = this.atTaskEnd;
    this.atTaskEnd = undefined;
    end?.();
  }

  members(): number[] {
    if (this.cgroup) return this.cgroup.members();
    // Its own pid namespace ended with its init: nothing outlives the leader there.
    if (this.ownPidNamespace) return [];
    return liveMembers(this.pgid).map((p) => p.pid);
  }

  private innerPid: number | null | undefined;
  get sandboxPid(): number | null {
    // Read while the leader lives (its pid is not reused), once.
    if (this.innerPid === undefined && !this.leaderExited) this.innerPid = sandboxPidOf(this.pid);
    return this.innerPid ?? null;
  }

  blockedOnInput(): boolean | null {
    return blockedOnInput(this.pgid);
  }
}
