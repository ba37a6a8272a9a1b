import { readdirSync, readFileSync, renameSync } from "node:fs";
import { rename } from "node:fs/promises";
import { join } from "node:path";
import { OWNER_TOKEN } from "../../runtime/env.ts";
import { processStartTime } from "../../runtime/process-groups/process-group.ts";
import type { Task, TaskInfo, TaskSandbox, TaskStatus } from "../tasks/task.ts";
import { makePrivateDir, writePrivateFile, rewritePrivateFileAsync, writePrivateFileAsync } from "./private-files.ts";

/** What `<owner>/tasks/<id>/meta.json` records, rewritten on every transition: the task's info, then its state. */
export interface TaskMeta extends TaskInfo {
  task_id: string;
  pid: number | null;
  pgid: number | null;
  /** Start time (clock ticks after boot) of the group leader, and the marker its environment carries: a pgid is signalled only when both still match. */
  pgid_start?: string;
  owner_token?: string;
  /** Kernel boot id: a pgid recorded before a reboot means nothing after it. */
  boot_id: string;
  started_at: string;
  ended_at?: string;
  status: TaskStatus;
  exit_code?: number | null;
  signal?: string | null;
  lost_reason?: string;
  /** The runtime's handle for re-attaching after a restart (remote background tasks). */
  resume_token?: string;
  /** The containment it ran under (SPEC §11), so recovered tasks still report it. */
  sandbox?: TaskSandbox;
}

let bootIdCache: string | null = null;
export function bootId(): string {
  if (bootIdCache === null) {
    try {
      bootIdCache = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      bootIdCache = "";
    }
  }
  return bootIdCache;
}

/** Leader start times, read once while the leader lives (meta.json is rewritten after it died). */
const leaderStart = new WeakMap<Task, string>();

function startOf(task: Task, pgid: number | null): string | undefined {
  if (pgid === null || task.info.host) return undefined;
  let start = leaderStart.get(task);
  if (start === undefined) {
    start = processStartTime(pgid) ?? undefined;
    if (start !== undefined) leaderStart.set(task, start);
  }
  return start;
}

export function metaOf(task: Task): TaskMeta {
  const pgid = task.pgid ?? null;
  return {
    task_id: task.id!,
    ...task.info,
    pid: task.pid ?? null,
    pgid,
    pgid_start: startOf(task, pgid),
    owner_token: task.info.host ? undefined : OWNER_TOKEN,
    boot_id: bootId(),
    started_at: task.startedAt.toISOString(),
    ended_at: task.endedAt?.toISOString(),
    status: task.status,
    exit_code: task.exit ? task.exitCode : undefined,
    signal: task.exit?.signal ?? undefined,
    lost_reason: task.lostReason,
    resume_token: task.resumeToken,
    sandbox: task.sandbox,
  };
}

/** Atomic write (tmp + rename): a crash never leaves half a meta.json. */
export function writeMeta(dir: string, meta: TaskMeta): void {
  try {
    makePrivateDir(dir);
    const tmp = join(dir, "meta.json.tmp");
    writePrivateFile(tmp, JSON.stringify(meta, null, 2));
    renameSync(tmp, join(dir, "meta.json"));
  } catch {
    /* metadata is best effort: the task itself goes on */
  }
}

/**
 * writeMeta with the file written off the event loop (the folder is checked, or made, first).
 * A crash during a task's first record may leave it unreadable: readers skip it, as they
 * would a task not yet recorded. Later records are replaced atomically, unless `inPlace`
 * (a private registry's records, which only a sweep after a crash reads): then rewritten
 * where they are, making no new inode.
 */
export async function writeMetaAsync(dir: string, meta: TaskMeta, opts: { inPlace?: boolean } = {}): Promise<void> {
  try {
    makePrivateDir(dir); // made with the log files: only checked here
    const text = JSON.stringify(meta, null, 2);
    // A task's first record replaces nothing: written in place, without a temporary file and rename.
    if (await writePrivateFileAsync(join(dir, "meta.json"), text, { onlyIfAbsent: true })) return;
    if (opts.inPlace && (await rewritePrivateFileAsync(join(dir, "meta.json"), text))) return;
    const tmp = join(dir, "meta.json.tmp");
    await writePrivateFileAsync(tmp, text);
    await rename(tmp, join(dir, "meta.json"));
  } catch {
    /* metadata is best effort: the task itself goes on */
  }
}

/** Every readable meta.json under `<ownerDir>/tasks/`. */
export function readMetas(ownerDir: string): Array<{ dir: string; meta: TaskMeta }> {
  const tasksDir = join(ownerDir, "tasks");
  let names: string[];
  try {
    names = readdirSync(tasksDir);
  } catch {
    return [];
  }
  const out: Array<{ dir: string; meta: TaskMeta }> = [];
  for (const name of names) {
    const dir = join(tasksDir, name);
    try {
      out.push({ dir, meta: JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as TaskMeta });
    } catch {
      /* not a task folder, or a torn write from before atomic renames */
    }
  }
  return out;
}
