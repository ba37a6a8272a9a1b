import type { ProcessHandle } from "../types.ts";
import type { SshConnection } from "./connection.ts";
import { Spawner } from "./spawner.ts";

/**
 * At most this many spawners per connection. Each holds a session slot while it lives;
 * more concurrent commands than this take a channel of their own (paying the rc files).
 */
const MAX_SPAWNERS = 4;

/**
 * The spawners of one connection: an idle one takes the next foreground command, a new
 * one is opened when all are busy (up to MAX_SPAWNERS), and one from an older connection
 * is never reused.
 */
export class SpawnerPool {
  private idle: Spawner[] = [];
  private count = 0;

  constructor(private readonly conn: SshConnection) {}

  /**
   * Starts a command on a spawner, or returns null when every spawner is busy and no more
   * may be opened (the caller then uses a channel of its own).
   */
  async spawn(command: string, cwd: string, env: Record<string, string>, stdin: null | { text: string }): Promise<ProcessHandle | null> {
    const spawner = this.takeIdle() ?? (await this.openOne());
    if (!spawner) return null;
    const handle = spawner.start(command, cwd, env, stdin);
    void handle.finished.then((ok) => {
      if (ok && !spawner.closed) this.idle.push(spawner);
    });
    // A NOT_FOUND rejection leaves the spawner usable once its markers are through (above).
    await handle.started;
    // As for a channel of its own: the command waits until the remote watchdog knows it.
    await this.conn.track(handle.pgid);
    handle.go();
    return handle;
  }

  /** Closes one idle spawner, giving its session slot to a channel that waits for one. */
  releaseIdle(): void {
    this.idle.shift()?.close();
  }

  private takeIdle(): Spawner | null {
    for (;;) {
      const s = this.idle.pop();
      if (!s) return null;
      if (!s.closed && s.generation === this.conn.generation) return s;
      s.close();
    }
  }

  private async openOne(): Promise<Spawner | null> {
    if (this.count >= MAX_SPAWNERS) return null;
    this.count++;
    let spawner: Spawner;
    try {
      spawner = await Spawner.open(this.conn);
    } catch (e) {
      this.count--;
      throw e;
    }
    spawner.onClose(() => {
      this.count--;
      this.idle = this.idle.filter((s) => s !== spawner);
    });
    return spawner;
  }
}
