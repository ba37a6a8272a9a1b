import { readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { OWNER_MARKER, OWNER_TOKEN } from "../../runtime/env.ts";
import { isOurGroup, killMarked, pidAlive, signalGroup } from "../../runtime/process-groups/process-group.ts";
import { type FileLock, tryLock } from "./file-lock.ts";
import { forgetRoot, makePrivateDir, privateDirProblem, trustRoot, writePrivateFile } from "./private-files.ts";
import { SpareTaskFolders } from "./spare-task-folders.ts";
import { bootId, readMetas } from "./task-meta.ts";

/** `--state-dir` / config / env, else `$XDG_STATE_HOME/agent-shell`, else `~/.local/state/agent-shell`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "agent-shell");
  return join(env.HOME || homedir(), ".local", "state", "agent-shell");
}

/** Another live registry holds the owner folder. */
export class OwnerBusyError extends Error {
  override name = "OwnerBusyError";
}

/** The state dir or an owner folder could be read or planted into by someone else. */
export class UnsafeStateDirError extends Error {
  override name = "UnsafeStateDirError";
}

/** Creates `dir` if needed (0700) and refuses it unless it is ours and closed to others. */
function openPrivate(dir: string, what: string, followLinks: boolean): void {
  makePrivateDir(dir);
  const problem = privateDirProblem(dir, what, followLinks);
  if (problem) throw new UnsafeStateDirError(problem);
}

/**
 * The folder a registry owns inside the state dir, locked while the registry lives:
 *  - persistent (daemon, `mcp --persist`): the state dir itself; tasks survive restarts;
 *  - private (a plain MCP server): `<state>/owners/<pid>-<random>/`, removed on clean exit.
 * Task logs and meta.json live in `<owner>/tasks/<id>/`.
 */
export class OwnerFolder {
  private foregroundCount = 0;
  private readonly spareTaskFolders: SpareTaskFolders;
  /** Released: nothing may be written here any more (a private folder is gone, or another registry may own it). */
  closed = false;

  private constructor(
    readonly dir: string,
    readonly persistent: boolean,
    private readonly lock: FileLock,
  ) {
    this.spareTaskFolders = new SpareTaskFolders(join(dir, "tasks"));
    writePrivateFile(
      join(dir, "owner.json"),
      JSON.stringify({ pid: process.pid, token: OWNER_TOKEN, boot_id: bootId(), started_at: new Date().toISOString() }),
    );
  }

  static open(stateDir: string, persistent: boolean): OwnerFolder {
    // The state dir itself may be reached through a link the user made; what is inside may not.
    openPrivate(stateDir, "state dir", true);
    sweepDeadOwners(stateDir);
    if (!persistent) {
      openPrivate(join(stateDir, "owners"), "owner folder", false);
      const dir = join(stateDir, "owners", `${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
      openPrivate(dir, "owner folder", false);
      trustRoot(dir);
      return new OwnerFolder(dir, false, tryLock(join(dir, "owner.lock"))!);
    }
    trustRoot(stateDir);
    const lockPath = join(stateDir, "owner.lock");
    let lock: FileLock | null;
    try {
      lock = tryLock(lockPath);
    } catch (e) {
      throw new UnsafeStateDirError(`cannot lock the state dir: ${(e as Error).message}`);
    }
    if (!lock) {
      const pid = ownerPid(stateDir);
      throw new OwnerBusyError(
        `state dir ${stateDir} is already used by a live persistent registry (lock ${lockPath} held by pid ${pid ?? "unknown"}); ` +
          `stop it (agent-shell daemon stop, or end that process) or use another --state-dir`,
      );
    }
    SpareTaskFolders.sweep(join(stateDir, "tasks")); // left by a registry that was killed
    return new OwnerFolder(stateDir, true, lock);
  }

  taskDir(id: string): string {
    return join(this.dir, "tasks", id);
  }

  /**
   * Makes task `id`'s folder and its empty logs: now from ones made ahead when they are ready,
   * else off the event loop (resolves once they exist, or could not be made: then the spools make them).
   */
  makeTaskDir(id: string): Promise<void> | null {
    const dir = this.taskDir(id);
    return this.spareTaskFolders.claim(dir) ? null : this.spareTaskFolders.makeOffLoop(dir).then(() => {});
  }

  /** A fresh folder for one foreground call's spooled output. */
  nextForegroundDir(): string {
    return join(this.dir, "foreground", String(++this.foregroundCount));
  }

  /** The last task number handed out here (persistent folders keep it across restarts). */
  readLastId(): number {
    try {
      return Number(readFileSync(join(this.dir, "last-id"), "utf8")) || 0;
    } catch {
      return 0;
    }
  }

  writeLastId(n: number): void {
    if (!this.persistent) return;
    try {
      writePrivateFile(join(this.dir, "last-id"), String(n));
    } catch {}
  }

  /** Release the lock; a private folder goes with it. */
  close(): void {
    this.closed = true;
    this.spareTaskFolders.close();
    if (this.persistent) rmSync(join(this.dir, "foreground"), { recursive: true, force: true });
    else rmSync(this.dir, { recursive: true, force: true });
    this.lock.release();
    forgetRoot(this.dir);
  }
}

function ownerInfo(dir: string): { pid?: number; token?: string; boot_id?: string } {
  try {
    return JSON.parse(readFileSync(join(dir, "owner.json"), "utf8"));
  } catch {
    return {};
  }
}

function ownerPid(dir: string): number | null {
  return ownerInfo(dir).pid ?? null;
}

/**
 * Private owner folders whose lock is free belong to registries that died without
 * cleaning up (and whose watchdog died too): kill what they recorded as running, remove them.
 */
export function sweepDeadOwners(stateDir: string): void {
  const ownersDir = join(stateDir, "owners");
  let names: string[];
  try {
    names = readdirSync(ownersDir);
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(ownersDir, name);
    // Only folders this user made privately are trusted enough to act on.
    if (privateDirProblem(dir, "owner folder", false)) continue;
    let lock: FileLock | null;
    try {
      lock = tryLock(join(dir, "owner.lock"));
    } catch {
      continue;
    }
    if (!lock) continue; // alive
    for (const { meta } of readMetas(dir)) {
      // A remote task's pgid is a process on its SSH host, not here; a local one is signalled
      // only when it is verifiably the group agent-shell started (meta.json alone proves nothing).
      if (meta.status === "running" && meta.pgid && !meta.host && meta.boot_id === bootId() && isOurGroup(meta.pgid, meta.pgid_start, meta.owner_token)) {
        signalGroup(meta.pgid, "SIGKILL");
      }
    }
    const owner = ownerInfo(dir);
    // The token names its owner's pid: a live pid means a live owner (or a forged file), never swept.
    if (owner.token && owner.boot_id === bootId() && !pidAlive(Number(owner.token.split("-")[0]))) killMarked(OWNER_MARKER, owner.token);
    rmSync(dir, { recursive: true, force: true });
    lock.release();
  }
}
