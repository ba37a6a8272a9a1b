import { mkdirSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cgroupMembers, cgroupsWanted, deadHostFolders, hostFolderName, markPersistent, ownCgroupDir, removeCgroup, taskFolders } from "./cgroup-hosts.ts";

/**
 * A process limit per task (SPEC §20, config `max_processes`): every local task is born in a
 * cgroup of the `pids` controller whose `pids.max` holds a fork bomb, whatever the sandbox
 * level, while the server (outside it) keeps answering. Used where the pids controller is
 * mounted as cgroup v1 (a hybrid hierarchy, as here) and this process may make folders there
 * (root, or a delegated subtree); where the v2 hierarchy has the controller, the task cgroup
 * of task-cgroup.ts carries the limit instead. Elsewhere there is no per-task limit (README).
 *
 * Folders are `<own pids cgroup>/agent-shell-<pid>[-persist]/task-N`. A host whose server and
 * watchdog were both SIGKILLed leaves its tasks running there; the next agent-shell start ends
 * them (SPEC §20), except a persistent registry's, which its next start recovers (SPEC §5).
 */
export class PidsLimit {
  private constructor(readonly path: string) {}

  /** Runs `spawn` (synchronous) with this process inside a new limited cgroup, so the child starts there. */
  static spawnInside<T>(spawn: () => T): { child: T; limit: PidsLimit | null } {
    const limit = PidsLimit.create();
    if (!limit) return { child: spawn(), limit: null };
    try {
      writeFileSync(join(limit.path, "cgroup.procs"), SELF);
    } catch {
      limit.release();
      return { child: spawn(), limit: null };
    }
    try {
      return { child: spawn(), limit };
    } finally {
      goHome();
    }
  }

  /** A new empty limited cgroup, for a process started outside and placed in before it runs a task (warm-launcher.ts). */
  static create(): PidsLimit | null {
    const found = ownFolder();
    if (!found) return null;
    sweepReleased();
    const path = join(found.root, `task-${++count}`);
    try {
      mkdirSync(path);
      writeFileSync(join(path, "pids.max"), String(maxProcesses));
    } catch {
      removeCgroup(path);
      return null;
    }
    live.add(path);
    return new PidsLimit(path);
  }

  /** Moves `pid` in, off the event loop (a migration may wait for an RCU grace period). */
  async place(pid: number): Promise<boolean> {
    try {
      await writeFile(join(this.path, "cgroup.procs"), String(pid));
      return true;
    } catch {
      return false;
    }
  }

  /** The folder goes once empty (now, or at a later spawn or exit). */
  release(): void {
    if (!removeCgroup(this.path)) released.add(this.path);
    live.delete(this.path);
  }

  /** The limit every new task gets, and whether this host's tasks outlive it on purpose (a persistent registry). */
  static configure(options: { maxProcesses: number; persistent: boolean }): void {
    maxProcesses = options.maxProcesses;
    if (options.persistent) markPersistent();
    if (swept || !cgroupsWanted()) return;
    swept = true;
    const home = ownCgroupDir("pids");
    if (home) endDeadHosts(home);
  }
}

const SELF = String(process.pid);
let maxProcesses = 2048;
let count = 0;
let swept = false;
let found: { root: string; home: string } | null | undefined;
const live = new Set<string>();
const released = new Set<string>();

function ownFolder(): { root: string; home: string } | null {
  if (found !== undefined) return found;
  found = null;
  if (!cgroupsWanted()) return found;
  try {
    const home = ownCgroupDir("pids");
    if (!home) return found;
    const root = join(home, hostFolderName());
    mkdirSync(root);
    found = { root, home: join(home, "cgroup.procs") };
    process.once("exit", removeOwn);
  } catch {
    found = null;
  }
  return found;
}

/** Back to our own cgroup; should that fail, stop using limits rather than stay limited. */
function goHome(): void {
  try {
    writeFileSync(found!.home, SELF);
  } catch {
    found = null;
  }
}

/**
 * The folders of hosts that are gone: what is still running in a private host's folder
 * outlived a SIGKILL of its server and watchdog, and is ended; then the empty folders go.
 */
function endDeadHosts(home: string): void {
  for (const host of deadHostFolders(home)) {
    for (const task of taskFolders(host.folder)) {
      if (!host.persistent) killMembers(task);
      removeCgroup(task);
    }
    removeCgroup(host.folder);
  }
}

/** SIGKILL to every process of a v1 cgroup, until it is empty (new forks are held by pids.max meanwhile). */
function killMembers(cgroup: string): void {
  for (let round = 0; round < 20; round++) {
    const pids = cgroupMembers(cgroup);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  }
}

/** Folders of tasks that have ended, removed a few at a time. */
function sweepReleased(): void {
  let n = 0;
  for (const path of released) {
    if (n++ >= 8) break;
    if (removeCgroup(path)) released.delete(path);
  }
}

function removeOwn(): void {
  if (!found) return;
  for (const path of [...live, ...released]) removeCgroup(path);
  removeCgroup(found.root);
}
