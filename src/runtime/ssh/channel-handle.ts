import type { ClientChannel } from "ssh2";
import type { ExitStatus, ProcessHandle } from "../types.ts";
import type { OpenChannel, SshConnection } from "./connection/connection.ts";
import { SshError } from "./errors.ts";
import { remoteGroupAlive, signalRemoteGroup } from "./remote-group.ts";

/** Output the remote user's rc files may print before our first line. */
const MAX_PREAMBLE_BYTES = 64 * 1024;

/**
 * A remote command streamed directly on its own exec channel: tty sessions, commands whose
 * stdin stays open, and foreground commands when every spawner is busy (spawner-pool.ts). The first output line is `P<pgid>`
 * (see scripts.ts); the rest is the command's output. Signals go through the control shell
 * (`kill -- -PGID`), because sshd ignores channel signals for root logins.
 * If the connection drops, the remote group is killed once the host is reachable again
 * (a foreground command never outlives its call).
 */
export class ChannelHandle implements ProcessHandle {
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array> | null;
  readonly exited: Promise<ExitStatus>;
  /** Resolves once the `P<pgid>` line has arrived. */
  private readonly started: Promise<void>;
  private stdoutCtl!: ReadableStreamDefaultController<Uint8Array>;
  private stderrCtl: ReadableStreamDefaultController<Uint8Array> | null = null;
  private stdinIsOpen: boolean;
  private disposed = false;
  private closed = false;
  private pgidValue = 0;
  /** stdout bytes before the `P<pgid>` line is complete. */
  private head: Buffer | null = Buffer.alloc(0);

  private constructor(
    private conn: SshConnection,
    private channel: ClientChannel,
    channelExit: OpenChannel["exit"],
    readonly tty: boolean,
    stdinOpen: boolean,
    cwd: string,
  ) {
    this.stdinIsOpen = stdinOpen;
    this.stdout = new ReadableStream({ start: (c) => void (this.stdoutCtl = c) });
    this.stderr = tty ? null : new ReadableStream({ start: (c) => void (this.stderrCtl = c) });
    let startedOk!: () => void;
    let startFailed!: (e: Error) => void;
    this.started = new Promise((resolve, reject) => ((startedOk = resolve), (startFailed = reject)));
    this.started.catch(() => {}); // observed by open(); never an unhandled rejection
    // Every listener is attached at once: ssh2 may deliver data, exit and close in one burst.
    channel.on("data", (d: Buffer) => {
      if (this.head === null) return this.push(this.stdoutCtl, d);
      this.head = Buffer.concat([this.head, d]);
      // Lines before ours come from the remote user's rc files: skip them (bounded).
      let line: string | null = null;
      let rest = this.head;
      for (let nl = rest.indexOf(10); nl >= 0; nl = rest.indexOf(10)) {
        const candidate = rest.subarray(0, nl).toString("latin1").replace(/\r$/, "");
        rest = rest.subarray(nl + 1);
        if (candidate === "C" || /^P\d+$/.test(candidate)) {
          line = candidate;
          break;
        }
      }
      if (line === null) {
        this.head = rest;
        if (this.head.byteLength > MAX_PREAMBLE_BYTES) {
          this.head = null;
          startFailed(new SshError("IO_ERROR", `The remote shell on host '${conn.name}' printed too much before starting the command (rc files?)`, { host: conn.name }));
        }
        return;
      }
      this.head = null;
      const m = /^P(\d+)$/.exec(line);
      if (!m) {
        startFailed(new SshError("NOT_FOUND", `working_directory not found on host '${conn.name}': ${cwd}`, { host: conn.name, working_directory: cwd }));
      } else {
        this.pgidValue = Number(m[1]);
        if (rest.byteLength) this.push(this.stdoutCtl, rest);
        startedOk();
      }
    });
    channel.stderr.on("data", (d: Buffer) => this.push(this.stderrCtl ?? this.stdoutCtl, d));
    channel.on("close", () => {
      this.closed = true;
      this.endStreams();
      startFailed(new SshError("IO_ERROR", `The remote shell on host '${conn.name}' exited before starting the command`, { host: conn.name }));
    });
    this.exited = channelExit.then((exit) => {
      if (!exit) {
        // Closed without an exit status: the connection went away under a running command.
        return { code: null, signal: null, lost: `the SSH connection to host '${conn.name}' was lost` };
      }
      return exit.signal ? { code: null, signal: `SIG${exit.signal.replace(/^SIG/, "")}` } : { code: exit.code, signal: null };
    });
  }

  get pid(): number {
    return this.pgidValue;
  }

  get pgid(): number {
    return this.pgidValue;
  }

  /**
   * Opens the channel and waits for the `P<pgid>` line. `stdin`: null closes it at once
   * (like /dev/null), a string is written then closed, "pipe" keeps it open.
   */
  static async open(
    conn: SshConnection,
    script: string,
    opts: { tty?: { cols: number; rows: number; term: string }; stdin: null | "pipe" | { text: string }; cwd: string },
  ): Promise<ChannelHandle> {
    const { channel, exit } = await conn.exec(script, {
      pty: opts.tty ? { cols: opts.tty.cols, rows: opts.tty.rows, term: opts.tty.term } : undefined,
    });
    const tty = !!opts.tty;
    const handle = new ChannelHandle(conn, channel, exit, tty, true, opts.cwd);
    try {
      await handle.started;
    } catch (e) {
      handle.dispose();
      throw e;
    }
    if (!tty) {
      // The command waits for this go-ahead (scripts.ts): by then the remote watchdog knows
      // its group, so no drop can leave it running. (A tty session dies with its terminal.)
      await conn.track(handle.pgid);
      await handle.write("go\n");
    }
    if (opts.stdin !== null && opts.stdin !== "pipe") {
      await handle.write(opts.stdin.text);
      handle.closeStdin();
    } else if (opts.stdin === null && !tty) {
      handle.closeStdin(); // end-of-file at once, like /dev/null
    }
    return handle;
  }

  private push(ctl: ReadableStreamDefaultController<Uint8Array>, d: Buffer): void {
    if (this.disposed) return;
    try {
      ctl.enqueue(new Uint8Array(d));
    } catch {
      /* the reader cancelled */
    }
  }

  private endStreams(): void {
    for (const c of [this.stdoutCtl, this.stderrCtl]) {
      try {
        c?.close();
      } catch {}
    }
  }

  get stdinOpen(): boolean {
    return this.stdinIsOpen && !this.closed;
  }

  async write(bytes: Uint8Array | string): Promise<number> {
    if (!this.stdinOpen) throw new Error("stdin is closed");
    const n = typeof bytes === "string" ? Buffer.byteLength(bytes) : bytes.byteLength;
    await new Promise<void>((resolve) => {
      if (this.channel.write(bytes)) return resolve();
      // Back-pressure: wait for the window to open, or for the channel to go away.
      const done = () => {
        this.channel.off("drain", done);
        this.channel.off("close", done);
        resolve();
      };
      this.channel.on("drain", done);
      this.channel.on("close", done);
    });
    return n;
  }

  closeStdin(): void {
    if (!this.stdinIsOpen) return;
    this.stdinIsOpen = false;
    try {
      this.channel.end();
    } catch {}
  }

  signal(signal: NodeJS.Signals): void {
    signalRemoteGroup(this.conn, this.pgid, signal);
  }

  groupAlive(): Promise<boolean> {
    return remoteGroupAlive(this.conn, this.pgid);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.pgidValue && !this.tty) this.conn.untrack(this.pgidValue);
    this.endStreams();
    try {
      this.channel.close();
    } catch {}
  }
}

