import { mkdirSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { processAlive } from "../process-groups/process-group.ts";
import { foldersIn } from "../../folders.ts";

/**
 * What the two kinds of per-task cgroup (task-cgroup.ts: the v2 one that kills, pids-limit.ts:
 * the v1 `pids` one that limits) share: where this process's own cgroup is, how a host names
 * its folder there (`agent-shell-<pid>`, `-persist` for a persistent registry, whose tasks a
 * later start recovers instead of ending), and finding the folders of hosts that are gone.
 */

/** Whether cgroups may be used here at all (AGENT_SHELL_CGROUPS=off turns them off). */
export function cgroupsWanted(): boolean {
  return process.platform === "linux" && process.env.AGENT_SHELL_CGROUPS !== "off";
}

/** This process's own cgroup folder in the v2 hierarchy, or in the v1 `pids` one; null where it is not mounted. */
export function ownCgroupDir(hierarchy: "v2" | "pids"): string | null {
  // This process never moves (the spawn helper places the children): read once.
  if (!(hierarchy in ownDirs)) ownDirs[hierarchy] = readOwnCgroupDir(hierarchy);
  return ownDirs[hierarchy] ?? null;
}
const ownDirs: { v2?: string | null; pids?: string | null } = {};

function readOwnCgroupDir(hierarchy: "v2" | "pids"): string | null {
  try {
    let mount: string | null = null;
    for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
      const [mountPart, fsPart] = line.split(" - ");
      const fs = fsPart?.split(" ");
      const found = hierarchy === "v2" ? fs?.[0] === "cgroup2" : fs?.[0] === "cgroup" && fs[2]?.split(",").includes("pids");
      if (found) {
        mount = mountPart!.split(" ")[4]!;
        break;
      }
    }
    const line = hierarchy === "v2" ? /^0::(.*)$/m : /^\d+:pids:(.*)$/m;
    const own = line.exec(readFileSync("/proc/self/cgroup", "utf8"))?.[1];
    return mount && own !== undefined ? join(mount, own) : null;
  } catch {
    return null;
  }
}

let persistent = false;

/** This host's tasks are meant to outlive it (a persistent registry): set before its folders are made. */
export function markPersistent(): void {
  persistent = true;
}

/** The name of this host's folder of task cgroups. */
export function hostFolderName(): string {
  return `agent-shell-${process.pid}${persistent ? "-persist" : ""}`;
}

/** This host's folder in `hierarchy`, made now; null where no cgroup can be made there (or AGENT_SHELL_CGROUPS=off). */
export function makeHostFolder(hierarchy: "v2" | "pids"): string | null {
  if (!cgroupsWanted()) return null;
  try {
    const home = ownCgroupDir(hierarchy);
    if (!home) return null;
    const root = join(home, hostFolderName());
    mkdirSync(root);
    return root;
  } catch {
    return null;
  }
}

/** The folders in `home` of hosts that are gone, and whether each was a persistent registry's. */
export function deadHostFolders(home: string): { folder: string; persistent: boolean }[] {
  return listDir(home).flatMap((name) => {
    const m = /^agent-shell-(\d+)(-persist)?$/.exec(name);
    const pid = Number(m?.[1]);
    if (!pid || pid === process.pid || processAlive(pid)) return [];
    return [{ folder: join(home, name), persistent: m![2] !== undefined }];
  });
}

/** The task cgroups in a host's folder. */
export function taskFolders(folder: string): string[] {
  return listDir(folder)
    .filter((d) => d.startsWith("task-"))
    .map((d) => join(folder, d));
}

/** The pids in a cgroup (none once everything is gone). */
export function cgroupMembers(cgroup: string): number[] {
  try {
    return readFileSync(join(cgroup, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Empty task cgroups kept for the next task: making a cgroup (mkdir) and removing one (rmdir)
 * cost the kernel 0.1–0.2 ms each, on every command's way, and an empty one is as good as a
 * new one. A few are kept; the rest are removed.
 */
export class SpareCgroups {
  private spare: string[] = [];
  constructor(private readonly max = 4) {}

  take(): string | undefined {
    return this.spare.pop();
  }

  /**
   * A task's cgroup, once its task has ended: kept when empty; true when it is gone or kept.
   * `knownEmpty`: its members were just read (nothing enters an empty task cgroup but a command
   * this server starts there).
   */
  give(path: string, knownEmpty = false): boolean {
    if (!knownEmpty && cgroupMembers(path).length > 0) return false;
    if (this.spare.length < this.max && !this.spare.includes(path)) {
      this.spare.push(path);
      return true;
    }
    return this.spare.includes(path) || removeCgroup(path);
  }

  /** Removes every spare one (the host is closing). */
  removeAll(): void {
    for (const path of this.spare.splice(0)) removeCgroup(path);
  }
}

/** Removes a cgroup folder; true when it is gone (the kernel refuses one that still holds a process). */
export function removeCgroup(path: string): boolean {
  try {
    rmdirSync(path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return true;
    // Cgroups inside it (the folder of an agent-shell run by one of its tasks, left when that one
    // died) go first, those that are empty; one that still holds a process is kept by the kernel.
    const children = code === "EBUSY" ? foldersIn(path) : [];
    if (children.length === 0) return false;
    for (const child of children) removeCgroup(child);
    try {
      rmdirSync(path);
      return true;
    } catch {
      return false;
    }
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
