import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { OWNER_MARKER, OWNER_TOKEN } from "../../runtime/env.ts";
import { killMarked, signalGroup } from "../../runtime/process-group.ts";
import { type FileLock, tryLock } from "./file-lock.ts";
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

/**
 * The folder a registry owns inside the state dir, locked while the registry lives:
 *  - persistent (daemon, `mcp --persist`): the state dir itself; tasks survive restarts;
 *  - private (a plain MCP server): `<state>/owners/<pid>-<random>/`, removed on clean exit.
 * Task logs and meta.json live in `<owner>/tasks/<id>/`.
 */
export class OwnerFolder {
  private foregroundCount = 0;

  private constructor(
    readonly dir: string,
    readonly persistent: boolean,
    private readonly lock: FileLock,
  ) {
    writeFileSync(
      join(dir, "owner.json"),
      JSON.stringify({ pid: process.pid, token: OWNER_TOKEN, boot_id: bootId(), started_at: new Date().toISOString() }),
    );
  }

  static open(stateDir: string, persistent: boolean): OwnerFolder {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    sweepDeadOwners(stateDir);
    if (!persistent) {
      const dir = join(stateDir, "owners", `${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      return new OwnerFolder(dir, false, tryLock(join(dir, "owner.lock"))!);
    }
    const lockPath = join(stateDir, "owner.lock");
    const lock = tryLock(lockPath);
    if (!lock) {
      const pid = ownerPid(stateDir);
      throw new OwnerBusyError(
        `state dir ${stateDir} is already used by a live persistent registry (lock ${lockPath} held by pid ${pid ?? "unknown"}); ` +
          `stop it (agent-shell daemon stop, or end that process) or use another --state-dir`,
      );
    }
    return new OwnerFolder(stateDir, true, lock);
  }

  taskDir(id: string): string {
    return join(this.dir, "tasks", id);
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
      writeFileSync(join(this.dir, "last-id"), String(n));
    } catch {}
  }

  /** Release the lock; a private folder goes with it. */
  close(): void {
    if (this.persistent) rmSync(join(this.dir, "foreground"), { recursive: true, force: true });
    else rmSync(this.dir, { recursive: true, force: true });
    this.lock.release();
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
    let lock: FileLock | null;
    try {
      lock = tryLock(join(dir, "owner.lock"));
    } catch {
      continue;
    }
    if (!lock) continue; // alive
    for (const { meta } of readMetas(dir)) {
      // A remote task's pgid is a process on its SSH host, not here.
      if (meta.status === "running" && meta.pgid && !meta.host && meta.boot_id === bootId()) signalGroup(meta.pgid, "SIGKILL");
    }
    const owner = ownerInfo(dir);
    if (owner.token && owner.boot_id === bootId()) killMarked(OWNER_MARKER, owner.token);
    rmSync(dir, { recursive: true, force: true });
    lock.release();
  }
}
