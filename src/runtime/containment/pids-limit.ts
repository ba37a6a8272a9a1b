import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupMembers, cgroupsWanted, deadHostFolders, makeHostFolder, markPersistent, ownCgroupDir, removeCgroup, SpareCgroups, taskFolders } from "./cgroup-hosts.ts";

/**
 * A process limit per task (SPEC §20, config `max_processes`): every local task is born in a
 * cgroup of the `pids` controller whose `pids.max` holds a fork bomb, whatever the sandbox
 * level, while the server (outside it) keeps answering. Used where the pids controller is
 * mounted as cgroup v1 (a hybrid hierarchy, as here) and this process may make folders there
 * (root, or a delegated subtree); where the v2 hierarchy has the controller, the task cgroup
 * of task-cgroup.ts carries the limit instead. Elsewhere there is no per-task limit (docs/sandbox.md).
 *
 * Folders are `<own pids cgroup>/agent-shell-<pid>[-persist]/task-N`. A host whose server and
 * watchdog were both SIGKILLed leaves its tasks running there; the next agent-shell start ends
 * them (SPEC §20), except a persistent registry's, which its next start recovers (SPEC §5).
 */
export class PidsLimit {
  private constructor(readonly path: string) {}

  /**
   * Its `tasks` file: a single-threaded process joins by writing "0" there, which moves only
   * its own thread and so needs no RCU grace period (a write to `cgroup.procs` waits ~5–10 ms
   * for one here); what it forks afterwards is born inside (the spawn helper does this).
   */
  get tasksFile(): string {
    return join(this.path, "tasks");
  }

  /** A new empty limited cgroup; the spawn helper joins it before it forks the command (tasksFile). */
  static create(): PidsLimit | null {
    const found = ownFolder();
    if (!found) return null;
    sweepReleased();
    const kept = spares.take(); // emptied by an earlier task; its pids.max is the same
    if (kept) {
      live.add(kept);
      return new PidsLimit(kept);
    }
    const path = join(found, `task-${++count}`);
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

  /** Once empty, kept for the next task (SpareCgroups) or removed (now, or at a later spawn or exit). */
  release(knownEmpty = false): void {
    if (!live.delete(this.path)) return; // once: the folder may hold the next task by now
    if (!spares.give(this.path, knownEmpty)) released.add(this.path);
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

let maxProcesses = 2048;
let count = 0;
let swept = false;
/** This host's folder of pids cgroups, made on first use. */
let found: string | null | undefined;
const live = new Set<string>();
const spares = new SpareCgroups();
const released = new Set<string>();

function ownFolder(): string | null {
  if (found !== undefined) return found;
  const folder = makeHostFolder("pids");
  if (folder) process.once("exit", removeOwn);
  found = folder;
  return folder;
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
    if (spares.give(path)) released.delete(path);
  }
}

function removeOwn(): void {
  if (!found) return;
  spares.removeAll();
  for (const path of [...live, ...released]) removeCgroup(path);
  removeCgroup(found);
}
