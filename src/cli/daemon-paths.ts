import { existsSync, lstatSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { defaultStateDir } from "../background/state/state-dir.ts";
import { tryLock } from "../background/state/file-lock.ts";

/** Where the per-user daemon lives: its socket, its start lock and its log, in the state dir. */
export interface DaemonPaths {
  stateDir: string;
  socket: string;
  lock: string;
  log: string;
}

/**
 * The state dir as every face resolves it: `--state-dir`, else the configured `state_dir`
 * (env `AGENT_SHELL_STATE_DIR` or the config file), else the XDG default. The config file
 * is read only when neither flag nor env decides, to keep CLI start-up short.
 */
export async function resolveStateDir(flag: string | undefined, configFile?: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (flag) return resolve(flag);
  if (env.AGENT_SHELL_STATE_DIR && configFile === undefined) return resolve(env.AGENT_SHELL_STATE_DIR);
  const { loadConfig } = await import("../config/load.ts");
  const { config } = loadConfig({ configFile, env });
  return resolve(config.state_dir ?? defaultStateDir(env));
}

export function daemonPaths(stateDir: string): DaemonPaths {
  return {
    stateDir,
    socket: join(stateDir, "daemon.sock"),
    lock: join(stateDir, "daemon.lock"),
    log: join(stateDir, "daemon.log"),
  };
}

/** Thrown when the state dir or socket belongs to someone else: we never talk to or remove those. */
export class ForeignOwnerError extends Error {}

/**
 * Creates the state dir (0700) and refuses one, or a socket in it, owned by another user:
 * a socket planted by someone else would receive our commands. With `create: false` a
 * missing state dir is left missing (false: there is no daemon there).
 */
export function checkOwnership(paths: DaemonPaths, opts: { create: boolean } = { create: true }): boolean {
  if (!opts.create && !existsSync(paths.stateDir)) return false;
  mkdirSync(paths.stateDir, { recursive: true, mode: 0o700 });
  const uid = process.getuid?.();
  if (uid === undefined) return true;
  const dir = lstatSync(paths.stateDir);
  if (dir.uid !== uid) {
    throw new ForeignOwnerError(`the state dir ${paths.stateDir} belongs to uid ${dir.uid}, not to you (uid ${uid}); use --state-dir`);
  }
  let sock;
  try {
    sock = lstatSync(paths.socket);
  } catch {
    return true;
  }
  if (sock.uid !== uid) {
    throw new ForeignOwnerError(`the daemon socket ${paths.socket} belongs to uid ${sock.uid}, not to you (uid ${uid}); refusing to use it`);
  }
  if (!sock.isSocket()) {
    throw new ForeignOwnerError(`${paths.socket} exists and is not a socket; remove it or use another --state-dir`);
  }
  return true;
}

/** Whether a live daemon holds the start lock (a probe: taking and dropping it if free). */
export function lockHeld(path: string): boolean {
  if (!existsSync(path)) return false;
  const probe = tryLock(path);
  if (!probe) return true;
  probe.release();
  return false;
}
