import type { ProcessHandle } from "../../types.ts";
import type { HostLink } from "../host-link.ts";
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

  constructor(private readonly conn: HostLink) {}

  /**
   * Starts a command on a spawner, or returns null when every spawner is busy and no more
   * may be opened (the caller then uses a channel of its own).
   */
  async spawn(command: string, cwd: string, env: Record<string, string>, stdin: null | { text: string }): Promise<ProcessHandle | null> {
    let spawner = this.takeIdle() ?? (await this.openOne());
    if (!spawner) return null;
    let handle = this.startOn(spawner, command, cwd, env, stdin);
    try {
      await handle.started;
    } catch (e) {
      // An idle spawner whose connection had just dropped: the command never got its `go`,
      // so it did not run; start it once more (on a new connection if need be).
      if (!spawner.closed) throw e;
      spawner = this.takeIdle() ?? (await this.openOne());
      if (!spawner) return null;
      handle = this.startOn(spawner, command, cwd, env, stdin);
      await handle.started;
    }
    // As for a channel of its own: the command waits until the remote watchdog knows it.
    await this.conn.track(handle.pgid);
    handle.go();
    return handle;
  }

  private startOn(spawner: Spawner, command: string, cwd: string, env: Record<string, string>, stdin: null | { text: string }) {
    const handle = spawner.start(command, cwd, env, stdin);
    // A NOT_FOUND rejection of `started` leaves the spawner usable once its markers are through.
    void handle.finished.then((ok) => {
      if (ok && !spawner.closed) this.idle.push(spawner);
    });
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
