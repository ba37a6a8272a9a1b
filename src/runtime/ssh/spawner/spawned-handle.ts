import type { ExitStatus, ProcessHandle } from "../../types.ts";
import { SshError } from "../errors.ts";
import { MarkerStream } from "./marker-stream.ts";
import { remoteGroupAlive, signalRemoteGroup } from "../remote-group.ts";
import type { HostLink } from "../host-link.ts";

/** What the remote user's rc files may print before the first command's start markers. */
const MAX_PREAMBLE_BYTES = 64 * 1024;

/** What a command uses of the spawner that started it (spawner.ts; named here, so the two files do not import each other). */
export interface SpawnerChannel {
  readonly conn: HostLink;
  write(text: string): void;
  close(): void;
}

/**
 * A foreground command started by a persistent spawner (spawner.ts): its stdout and
 * stderr are the spawner channel's two streams between the command's markers, its exit
 * status is the `X`/`K` marker. Signals and liveness go through the control shell by
 * pgid, as for ChannelHandle. `finished` resolves once the spawner has printed every
 * marker of this command, i.e. it can take the next one.
 */
export class SpawnedHandle implements ProcessHandle {
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  readonly exited: Promise<ExitStatus>;
  /** Resolves on `P<pgid>`; rejects with NOT_FOUND (`C`) or IO_ERROR (channel gone). */
  readonly started: Promise<void>;
  /** Resolves when the spawner is done with this command (false: the channel went away). */
  readonly finished: Promise<boolean>;
  readonly stdinOpen = false;
  private stdoutCtl!: ReadableStreamDefaultController<Uint8Array>;
  private stderrCtl!: ReadableStreamDefaultController<Uint8Array>;
  private readonly out: MarkerStream;
  private readonly err: MarkerStream;
  private pgidValue = 0;
  private ends = 0;
  private exit: ExitStatus | null = null;
  private disposed = false;
  private settleStart!: (e?: Error) => void;
  private settleExit!: (s: ExitStatus) => void;
  private settleFinished!: (ok: boolean) => void;
  private isFinished = false;

  constructor(
    private readonly spawner: SpawnerChannel,
    nonce: string,
    cwd: string,
  ) {
    const host = spawner.conn.name;
    this.stdout = new ReadableStream({ start: (c) => void (this.stdoutCtl = c) });
    this.stderr = new ReadableStream({ start: (c) => void (this.stderrCtl = c) });
    this.started = new Promise<void>((resolve, reject) => (this.settleStart = (e) => (e ? reject(e) : resolve())));
    this.started.catch(() => {}); // observed by the pool; never an unhandled rejection
    this.exited = new Promise((resolve) => (this.settleExit = resolve));
    this.finished = new Promise((resolve) => (this.settleFinished = (ok) => ((this.isFinished = true), resolve(ok))));
    const marker = (kind: string, value: string) => {
      if (kind === "P") {
        this.pgidValue = Number(value);
        this.out.passing = true;
        this.settleStart();
      } else if (kind === "S") this.err.passing = true;
      else if (kind === "C") {
        this.settleStart(new SshError("NOT_FOUND", `working_directory not found on host '${host}': ${cwd}`, { host, working_directory: cwd }));
      } else if (kind === "X") this.exited_({ code: Number(value), signal: null });
      else if (kind === "K") this.exited_({ code: null, signal: `SIG${value}` });
      else if (kind === "E") this.streamEnded();
    };
    this.out = new MarkerStream(nonce, {
      data: (b) => this.push(this.stdoutCtl, b),
      marker: (kind, value) => {
        if (kind === "E") this.out.passing = false;
        marker(kind, value);
      },
    });
    this.err = new MarkerStream(nonce, {
      data: (b) => this.push(this.stderrCtl, b),
      marker: (kind, value) => {
        if (kind === "E") this.err.passing = false;
        marker(kind, value);
      },
    });
  }

  onStdout(d: Buffer): void {
    this.out.push(d);
    if (!this.out.passing && this.out.dropped > MAX_PREAMBLE_BYTES && this.pgidValue === 0) {
      this.settleStart(new SshError("IO_ERROR", `The remote shell on host '${this.spawner.conn.name}' printed too much before starting the command (rc files?)`, { host: this.spawner.conn.name }));
      this.spawner.close();
    }
  }

  onStderr(d: Buffer): void {
    this.err.push(d);
  }

  /** The spawner channel closed under this command (the connection went away). */
  onClose(): void {
    const host = this.spawner.conn.name;
    this.settleStart(new SshError("IO_ERROR", `The remote shell on host '${host}' exited before starting the command`, { host }));
    this.exited_({ code: null, signal: null, lost: `the SSH connection to host '${host}' was lost` });
    this.endStreams();
    this.settleFinished(false);
  }

  private exited_(status: ExitStatus): void {
    if (this.exit) return;
    this.exit = status;
    this.settleExit(status);
    this.checkFinished();
  }

  private streamEnded(): void {
    this.ends++;
    if (this.ends === 2) this.endStreams();
    this.checkFinished();
  }

  private checkFinished(): void {
    if (this.exit && this.ends >= 2) this.settleFinished(true);
  }

  private push(ctl: ReadableStreamDefaultController<Uint8Array>, d: Buffer): void {
    if (this.disposed) return;
    try {
      ctl.enqueue(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
    } catch {
      /* the reader cancelled */
    }
  }

  private endStreams(): void {
    for (const c of [this.stdoutCtl, this.stderrCtl]) {
      try {
        c.close();
      } catch {}
    }
  }

  get pid(): number {
    return this.pgidValue;
  }

  get pgid(): number {
    return this.pgidValue;
  }

  /** Lets the command run (it waits for this once its group is tracked). */
  go(): void {
    this.spawner.write("go\n");
  }

  async write(): Promise<number> {
    throw new Error("stdin is closed");
  }

  closeStdin(): void {}

  signal(signal: NodeJS.Signals): void {
    signalRemoteGroup(this.spawner.conn, this.pgid, signal);
  }

  groupAlive(): Promise<boolean> {
    return remoteGroupAlive(this.spawner.conn, this.pgid);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.pgidValue) this.spawner.conn.untrack(this.pgidValue);
    this.endStreams();
    // Abandoned with output still open (a leftover that escaped its group holds it): the
    // spawner cannot tell that output from the next command's any more.
    if (!this.isFinished) this.spawner.close();
  }
}
