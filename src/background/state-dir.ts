import { mkdirSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** `--state-dir` / config / env, else `$XDG_STATE_HOME/agent-shell`, else `~/.local/state/agent-shell`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "agent-shell");
  return join(homedir(), ".local", "state", "agent-shell");
}

/**
 * The folder a registry owns inside the state dir: task logs and metadata live under it.
 * A private owner (an MCP server) gets its own folder, removed on clean exit.
 */
export class OwnerFolder {
  private foregroundCount = 0;

  constructor(
    readonly dir: string,
    readonly persistent: boolean,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  static private(stateDir: string): OwnerFolder {
    const name = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    return new OwnerFolder(join(stateDir, "owners", name), false);
  }

  taskDir(id: string): string {
    return join(this.dir, "tasks", id);
  }

  /** A fresh folder for one foreground call's spooled output. */
  nextForegroundDir(): string {
    return join(this.dir, "foreground", String(++this.foregroundCount));
  }

  /** Removed on clean exit unless the registry persists. */
  close(): void {
    if (!this.persistent) rmSync(this.dir, { recursive: true, force: true });
  }
}
