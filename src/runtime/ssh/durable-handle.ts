import type { ExitStatus, ProcessHandle } from "../types.ts";
import type { SshConnection } from "./connection/connection.ts";
import { remoteGroupAlive, signalRemoteGroup } from "./remote-group.ts";
import { exitStatusScript, removeTaskScript, tailScript } from "./scripts.ts";

const RETRY_FIRST_MS = 200;
/** How long one tail channel follows the files before handing its session slot back. */
const TAIL_LEASE_SECONDS = 5;
const RETRY_MAX_MS = 5_000;
/** A kill that cannot reach the host gives up after this long: the task becomes lost. */
const KILL_UNREACHABLE_MS = 15_000;

const SIGNALS: Record<number, string> = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 13: "SIGPIPE", 15: "SIGTERM" };

/**
 * A remote background task that survives a dropped connection. It runs detached on the
 * remote host writing its output and exit status to files (scripts.ts `launchScript`);
 * this handle follows those files from the byte counts already received, over a tail
 * channel that is reopened after every drop, so the output arrives with no gap and no
 * duplicate. Files gone → the task is lost, with the reason.
 */
export class DurableHandle implements ProcessHandle {
  readonly stdinOpen = false;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  readonly exited: Promise<ExitStatus>;
  private stdoutCtl!: ReadableStreamDefaultController<Uint8Array>;
  private stderrCtl!: ReadableStreamDefaultController<Uint8Array>;
  private received = { out: 0, err: 0 };
  private disposed = false;
  private signalled = false;
  private killDeadline: number | null = null;
  private stopTail: (() => void) | null = null;
  /** Set while the connection is down; the task is still running remotely. */
  note: string | null = null;

  constructor(
    private conn: SshConnection,
    /** Folder name under the remote tasks dir. */
    readonly remoteName: string,
    readonly pid: number,
    /** Bytes of each stream already received (kept locally) when re-attaching after a restart. */
    offsets = { stdout: 0, stderr: 0 },
  ) {
    this.received = { out: offsets.stdout, err: offsets.stderr };
    this.stdout = new ReadableStream({ start: (c) => void (this.stdoutCtl = c) });
    this.stderr = new ReadableStream({ start: (c) => void (this.stderrCtl = c) });
    this.exited = this.follow();
  }

  get pgid(): number {
    return this.pid;
  }

  get resumeToken(): string {
    return this.remoteName;
  }

  private async follow(): Promise<ExitStatus> {
    let delay = RETRY_FIRST_MS;
    for (;;) {
      if (this.disposed) return this.end({ code: null, signal: null, lost: "abandoned" });
      let outcome: "done" | "gone" | "dropped" | "lease";
      try {
        outcome = await this.tailOnce();
      } catch (e) {
        outcome = "dropped";
        this.note = `connection to host '${this.conn.name}' lost (${(e as Error).message}); reconnecting — the task keeps running remotely`;
      }
      if (outcome === "gone") return this.end(this.lost());
      if (outcome === "lease") {
        delay = RETRY_FIRST_MS;
        continue;
      }
      if (outcome === "done") {
        try {
          const { code, out } = await this.conn.run(exitStatusScript(this.remoteName));
          if (code === 3) return this.end(this.lost());
          const m = /^X(\d+)/.exec(out.trim());
          if (!m) return this.end({ code: null, signal: null, lost: `the remote task ended without recording its exit status (${this.dirText})` });
          return this.end(this.status(Number(m[1])));
        } catch (e) {
          this.note = `connection to host '${this.conn.name}' lost (${(e as Error).message}); reconnecting`;
        }
      }
      if (this.killDeadline !== null && performance.now() > this.killDeadline) {
        return this.end({
          code: null,
          signal: null,
          lost: `host '${this.conn.name}' could not be reached to kill the task; it may still be running there (${this.dirText})`,
        });
      }
      await Bun.sleep(delay);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }

  /** One tail channel from the current offsets; how it ended. */
  private async tailOnce(): Promise<"done" | "gone" | "dropped" | "lease"> {
    const script = tailScript(this.remoteName, this.received.out, this.received.err, TAIL_LEASE_SECONDS);
    const { channel, exit } = await this.conn.exec(script);
    this.note = null;
    return new Promise((resolve) => {
      this.stopTail = () => channel.close();
      channel.on("data", (d: Buffer) => {
        this.received.out += d.byteLength;
        this.push(this.stdoutCtl, d);
      });
      channel.stderr.on("data", (d: Buffer) => {
        this.received.err += d.byteLength;
        this.push(this.stderrCtl, d);
      });
      channel.on("close", async () => {
        const exitCode = (await exit)?.code ?? null;
        this.stopTail = null;
        if (exitCode === 0) resolve("done");
        else if (exitCode === 3) resolve("gone");
        else if (exitCode === 4) resolve("lease");
        else {
          this.note = `connection to host '${this.conn.name}' lost; reconnecting — the task keeps running remotely`;
          resolve("dropped");
        }
      });
    });
  }

  private get dirText(): string {
    return `~/.agent-shell/tasks/${this.remoteName} on host '${this.conn.name}'`;
  }

  private lost(): ExitStatus {
    return { code: null, signal: null, lost: `the remote task's files are gone (${this.dirText}): its output and exit status cannot be recovered` };
  }

  /** Wait statuses above 128 are signals when we sent one (a command may also `exit 143`). */
  private status(code: number): ExitStatus {
    if (this.signalled && code > 128 && SIGNALS[code - 128]) return { code: null, signal: SIGNALS[code - 128]! };
    return { code, signal: null };
  }

  private end(status: ExitStatus): ExitStatus {
    for (const c of [this.stdoutCtl, this.stderrCtl]) {
      try {
        c.close();
      } catch {}
    }
    return status;
  }

  private push(ctl: ReadableStreamDefaultController<Uint8Array>, d: Buffer): void {
    try {
      ctl.enqueue(new Uint8Array(d));
    } catch {}
  }

  async write(): Promise<number> {
    throw new Error("stdin of a remote background task is closed");
  }

  closeStdin(): void {}

  signal(signal: NodeJS.Signals): void {
    this.signalled = true;
    this.killDeadline ??= performance.now() + KILL_UNREACHABLE_MS;
    signalRemoteGroup(this.conn, this.pgid, signal);
  }

  groupAlive(): Promise<boolean> {
    return remoteGroupAlive(this.conn, this.pgid);
  }

  /** Output is in the local spool now: the remote files go. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.stopTail?.();
    void this.conn.run(removeTaskScript(this.remoteName)).catch(() => {});
  }
}
