import { existsSync, mkdirSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { dirname, join } from "node:path";
import { cgroupMembers, cgroupsWanted, deadHostFolders, makeHostFolder, markPersistent, ownCgroupDir, removeCgroup, SpareCgroups, taskFolders } from "./cgroup-hosts.ts";
import { processGroupOf } from "../process-groups/process-group.ts";
import { watchdog } from "../process-groups/watchdog.ts";

/**
 * A cgroup v2 per task (SPEC §14, exact containment): whatever a task starts stays in its
 * cgroup, also after `setsid`, a double fork or removing agent-shell's variables from its
 * environment, and `cgroup.kill` ends all of it at once. Used where this process may create
 * cgroups below its own (root, or a delegated subtree as systemd gives a user session) and
 * the kernel has `cgroup.kill` (5.14+); elsewhere a sandboxed task gets a pid namespace of
 * its own instead, and an unsandboxed one falls back to the process group and the owner marker.
 *
 * The child is born inside its cgroup (the spawn helper clones it there: CLONE_INTO_CGROUP,
 * no migration), so not even a command whose first act is `setsid -f` can fork outside it.
 */
export class TaskCgroup {
  /** Given back (release): the folder may hold the next task now, so this task's hold on it is gone. */
  private released = false;
  /**
   * Killed through `cgroup.kill`: the kernel then also kills what is cloned into it later
   * (measured on 6.18), so such a folder is removed, never kept for another task.
   */
  private killed = false;

  constructor(readonly path: string) {}

  /**
   * Whether this host's tasks are meant to outlive it (a persistent registry recovers them,
   * SPEC §5): then a later start leaves them running instead of ending them. Set before the
   * first task; also sweeps the folders of dead hosts now (SPEC §20).
   */
  static configure(options: { persistent: boolean }): void {
    if (options.persistent) markPersistent();
    if (!cgroupsWanted()) return;
    const home = ownCgroupDir("v2");
    if (home) removeDeadHostsFolders(home);
  }

  /** Whether tasks get cgroups here. */
  static available(): boolean {
    return ownRoot() !== null;
  }

  /** An empty task cgroup for a new task (the spawn helper clones the command into it); null where cgroups cannot be used. */
  static create(): TaskCgroup | null {
    const found = ownRoot();
    if (!found) return null;
    const kept = spares.take();
    if (kept) return new TaskCgroup(kept);
    const path = join(found, `task-${++taskCount}`);
    try {
      mkdirSync(path);
      return new TaskCgroup(path);
    } catch {
      return null;
    }
  }

  /** Pids inside (none once everything is gone). */
  members(): number[] {
    return this.released ? [] : cgroupMembers(this.path);
  }

  /**
   * Resolves true once no process is left inside, false after `ms`. The kernel reports the
   * change in `cgroup.events` ("populated 0"), which inotify (fs.watch) delivers: nothing
   * polls, so the dying processes keep the CPU they need to die (polling between turns of the
   * event loop took as much CPU as their deaths and made a kill 0.1–1.3 ms slower). That
   * report travels through a kernel work queue and the watcher's thread (~0.15 ms after the
   * pipes of a dying process close): each of `hints` (its output closed, its leader's exit)
   * is a moment to look at once.
   */
  whenEmpty(ms: number, hints: Promise<unknown>[] = []): Promise<boolean> {
    return new Promise((resolve) => {
      const deadline = performance.now() + ms;
      let watcher: FSWatcher | null = null;
      let timer: ReturnType<typeof setTimeout> | null = null;
      let done = false;
      let pause = 1;
      const unwatch = () => {
        if (!watcher) return;
        watcher.close();
        watcher = null;
        watching--;
      };
      const finish = (empty: boolean) => {
        if (done) return;
        done = true;
        unwatch();
        if (timer) clearTimeout(timer);
        resolve(empty);
      };
      const look = () => {
        if (!done && this.members().length === 0) finish(true);
      };
      // Hundreds of kills at once (kill all): a watch each costs more than it saves (~0.3 ms
      // to make and close); the hints then say when to look, and polls are rarer.
      const crowded = watching >= CROWDED_WATCHES;
      const maxPause = crowded ? 50 : 10;
      if (crowded) pause = 5;
      // The next look: at the deadline while inotify watches, else after a pause growing from 1 to maxPause ms.
      const schedule = () => {
        if (done) return;
        if (timer) clearTimeout(timer);
        const left = deadline - performance.now();
        if (left <= 0) return finish(this.members().length === 0);
        timer = setTimeout(
          () => {
            look();
            schedule();
          },
          watcher ? left : Math.min(pause, left),
        );
        pause = Math.min(pause * 2, maxPause);
      };
      if (!crowded) {
        try {
          watcher = watch(join(this.path, "cgroup.events"), look);
          watching++;
          watcher.on("error", () => {
            unwatch();
            schedule();
          });
        } catch {
          watcher = null; // no inotify watch to be had (the limit reached): polls
        }
      }
      look(); // emptied before the watch was in place
      schedule();
      for (const hint of hints) void hint.then(look, () => {});
    });
  }

  /**
   * Signals everything inside. `group`: a process group just signalled as a whole (the
   * task's own): its members are left out, those born since too (a TERM handler's cleanup
   * command must not get the TERM it is handling), and only what left it (setsid, setpgid) is
   * signalled here.
   */
  signal(signal: NodeJS.Signals, group?: number): void {
    if (this.released) return;
    if (signal === "SIGKILL") {
      try {
        this.killed = true;
        writeFileSync(join(this.path, "cgroup.kill"), "1");
        return;
      } catch {}
    }
    for (const pid of this.members()) {
      if (group !== undefined && (pid === group || processGroupOf(pid) === group)) continue;
      try {
        process.kill(pid, signal);
      } catch {}
    }
  }

  /** Once it is empty (`knownEmpty`: just read so): kept for the next task (SpareCgroups) or removed; true when done. */
  release(knownEmpty = false): boolean {
    if (this.released) return true;
    this.released = this.killed ? removeCgroup(this.path) : spares.give(this.path, knownEmpty);
    return this.released;
  }
}

let taskCount = 0;
const spares = new SpareCgroups();
/** Task cgroups watched at this moment (whenEmpty), and how many make a crowd. */
let watching = 0;
const CROWDED_WATCHES = 32;
let swept = false;
/** This server's folder of task cgroups, made on first use. */
let found: string | null | undefined;

/** Made on first use; null where no cgroup can be made (or AGENT_SHELL_CGROUPS=off). */
function ownRoot(): string | null {
  if (found !== undefined) return found;
  let root = makeHostFolder("v2");
  if (root && !existsSync(join(root, "cgroup.kill"))) {
    removeCgroup(root); // no cgroup.kill (before 5.14): no task cgroups
    root = null;
  }
  found = root;
  if (!root) return null;
  watchdog().cgroupRoot(root); // a SIGKILLed host's tasks die with it, cgroups and all
  process.once("exit", removeRoot);
  removeDeadHostsFolders(dirname(root)); // where configure() was not called first
  return root;
}

/**
 * The folders of hosts that died without removing theirs. Tasks still in a private host's
 * folder outlived a SIGKILL of its server and its watchdog: they are ended (SPEC §20); a
 * persistent host's are left for its next start to recover. A folder is removed once
 * nothing is left in it (the kernel refuses to remove a cgroup that still holds a process).
 */
function removeDeadHostsFolders(home: string): void {
  if (swept) return; // once per process
  swept = true;
  for (const host of deadHostFolders(home)) {
    if (!host.persistent) for (const task of taskFolders(host.folder)) new TaskCgroup(task).signal("SIGKILL");
    removeFolder(host.folder);
  }
}

/**
 * At exit: our folder goes with its task cgroups. A launcher killed just before (its cgroup
 * still holding it for the moment its exit takes) is waited for briefly, so the folder does
 * not outlive its host on a busy machine.
 */
function removeRoot(): void {
  if (!found) return;
  const deadline = performance.now() + 200;
  removeFolder(found);
  while (existsSync(found) && performance.now() < deadline) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    removeFolder(found);
  }
}

/** A host's folder and its task cgroups, those that are empty. */
function removeFolder(root: string): void {
  for (const task of taskFolders(root)) removeCgroup(task);
  removeCgroup(root);
}
