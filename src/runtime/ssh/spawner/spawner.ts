import type { ClientChannel } from "ssh2";
import type { HostLink } from "../host-link.ts";
import { SPAWNER_PRELUDE, spawnScript } from "../scripts.ts";
import { SpawnedHandle } from "./spawned-handle.ts";

/**
 * One persistent remote bash on its own exec channel. sshd runs every exec channel through
 * the user's login shell, which sources ~/.bashrc (Debian's bash does so whenever SSH_CLIENT
 * is set, and no exec command can prevent it): a heavy rc costs every channel its run time.
 * A spawner pays it once, when it opens, and its commands inherit the environment the rc
 * files exported (a new connection opens new spawners, so the rc runs again there).
 * It runs one command at a time on its channel's stdout and stderr (protocol in scripts.ts).
 */
export class Spawner {
  private current: SpawnedHandle | null = null;
  private closeListeners: Array<() => void> = [];
  closed = false;

  private constructor(
    readonly conn: HostLink,
    private readonly channel: ClientChannel,
    readonly generation: number,
  ) {
    // Data with no current command is rc-file chatter: dropped.
    channel.on("data", (d: Buffer) => this.current?.onStdout(d));
    channel.stderr.on("data", (d: Buffer) => this.current?.onStderr(d));
    channel.on("close", () => {
      this.closed = true;
      this.current?.onClose();
      this.current = null;
      for (const l of this.closeListeners.splice(0)) l();
    });
  }

  static async open(conn: HostLink): Promise<Spawner> {
    const { channel, generation } = await conn.exec("exec bash --norc --noprofile");
    const spawner = new Spawner(conn, channel, generation);
    spawner.write(SPAWNER_PRELUDE);
    return spawner;
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** Sends one command; the handle reports its start, output and end. */
  start(command: string, cwd: string, env: Record<string, string>, stdin: null | { text: string }): SpawnedHandle {
    if (this.current) throw new Error("spawner is busy");
    const nonce = `__as${Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString("hex")}_`;
    const handle = new SpawnedHandle(this, nonce, cwd);
    this.current = handle;
    void handle.finished.then((ok) => {
      if (ok && this.current === handle) this.current = null;
    });
    this.write(spawnScript(nonce, command, cwd, env, stdin));
    return handle;
  }

  write(text: string): void {
    if (this.closed) return;
    try {
      this.channel.write(text);
    } catch {}
  }

  close(): void {
    if (this.closed) return;
    try {
      this.channel.end();
      this.channel.close();
    } catch {}
  }
}
