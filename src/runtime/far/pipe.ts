import { CodedError } from "../../errors.ts";
import { OWNER_MARKER } from "../env.ts";
import type { SshConnection } from "../ssh/connection/connection.ts";
import { shq } from "../ssh/quote.ts";
import { describeWayIn, pipeArgv, type WayIn } from "./way-in.ts";

/**
 * A byte pipe to a program on the far side: `sh -c SCRIPT` run through a container
 * engine's `exec -i`, any configured exec command, or an SSH channel. Bytes only: what
 * speaks over it (MCP) lives above; stderr is kept for messages.
 */
export interface FarPipe {
  /** The local pipe process (the engine's `exec`), or null over an SSH channel. */
  readonly pid: number | null;
  /** Hands every stdout chunk to `cb` (chunks read before are handed over at once). */
  onData(cb: (chunk: Uint8Array) => void): void;
  write(data: string): void;
  /** Resolves once the pipe is gone, with the far program's exit status when known. */
  readonly closed: Promise<number | null>;
  /** The last lines the far side (or the engine) wrote to stderr. */
  stderrTail(): string;
  /** Ends stdin (the far program sees EOF), then stops the pipe if it lingers. */
  close(): void;
}

export interface PipeOptions {
  /** A local file fed to the far program's stdin (then EOF) instead of a writable pipe. */
  stdinFile?: string;
}

/** Stops a pipe process that outlives its stdin's end by this much. */
const CLOSE_GRACE_MS = 2000;
const STDERR_KEEP = 4096;

export async function openPipe(way: WayIn, script: string, opts: PipeOptions = {}, ssh?: () => SshConnection): Promise<FarPipe> {
  if (way.kind === "ssh") return SshPipe.open(ssh!(), script, opts);
  return ProcessPipe.open(way, script, opts);
}

/** A byte stream's chunks, queued until someone listens. */
class Chunks {
  private queue: Uint8Array[] = [];
  private cb: ((chunk: Uint8Array) => void) | null = null;

  push(chunk: Uint8Array): void {
    if (this.cb) this.cb(chunk);
    else this.queue.push(chunk.slice());
  }

  listen(cb: (chunk: Uint8Array) => void): void {
    this.cb = cb;
    const queued = this.queue;
    this.queue = [];
    for (const chunk of queued) cb(chunk);
  }
}

class StderrTail {
  private text = "";
  push(chunk: Uint8Array | string): void {
    this.text = (this.text + (typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))).slice(-STDERR_KEEP);
  }
  toString(): string {
    return this.text.trim();
  }
}

class ProcessPipe implements FarPipe {
  private readonly out = new Chunks();
  private readonly errors = new StderrTail();
  readonly closed: Promise<number | null>;

  private constructor(private readonly proc: Bun.Subprocess<"pipe" | Bun.BunFile, "pipe", "pipe">) {
    const out = this.pump(proc.stdout, (c) => this.out.push(c));
    const err = this.pump(proc.stderr, (c) => this.errors.push(c));
    // Closed when the process has exited and its output is read to the end.
    this.closed = Promise.all([proc.exited, out, err]).then(([code]) => code);
  }

  static open(way: Exclude<WayIn, { kind: "ssh" }>, script: string, opts: PipeOptions): ProcessPipe {
    const argv = pipeArgv(way, script);
    try {
      const proc = Bun.spawn(argv, {
        stdin: opts.stdinFile !== undefined ? Bun.file(opts.stdinFile) : "pipe",
        stdout: "pipe",
        stderr: "pipe",
        env: pipeEnv(),
        // Its own session: a terminal's Ctrl-C reaches the near side (which cancels the call
        // there), not the engine's exec, which would pass it on and end the pipe.
        detached: true,
      });
      return new ProcessPipe(proc as Bun.Subprocess<"pipe" | Bun.BunFile, "pipe", "pipe">);
    } catch (e) {
      const what = way.kind === "container" ? `the container engine '${way.engine}' is not installed (not on PATH)` : `'${argv[0]}' cannot be started`;
      throw new CodedError("IO_ERROR", `Cannot reach ${describeWayIn(way)}: ${what}: ${(e as Error).message}`, {});
    }
  }

  get pid(): number {
    return this.proc.pid;
  }

  private async pump(stream: ReadableStream<Uint8Array>, push: (c: Uint8Array) => void): Promise<void> {
    try {
      for await (const chunk of stream) push(chunk);
    } catch {
      /* the pipe broke: closed says so */
    }
  }

  onData(cb: (chunk: Uint8Array) => void): void {
    this.out.listen(cb);
  }

  write(data: string): void {
    const sink = this.proc.stdin as Bun.FileSink;
    try {
      sink.write(data);
      void Promise.resolve(sink.flush()).catch(() => {});
    } catch {
      /* the process is gone: closed resolves and the caller hears of it there */
    }
  }

  stderrTail(): string {
    return this.errors.toString();
  }

  close(): void {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    try {
      if (typeof this.proc.stdin === "object" && this.proc.stdin !== null && "end" in this.proc.stdin) void (this.proc.stdin as Bun.FileSink).end();
    } catch {
      /* already closed */
    }
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), CLOSE_GRACE_MS);
    timer.unref?.();
    void this.proc.exited.then(() => clearTimeout(timer));
  }
}

/**
 * The engine's (or exec command's) environment: ours, without agent-shell's own variables,
 * which are this side's settings (state dir, sandbox, owner) and not the far side's.
 */
function pipeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AGENT_SHELL_") && k !== OWNER_MARKER) env[k] = v;
  return env;
}

class SshPipe implements FarPipe {
  private readonly out = new Chunks();
  private readonly errors = new StderrTail();
  readonly pid = null;
  readonly closed: Promise<number | null>;

  private constructor(private readonly channel: import("ssh2").ClientChannel, exit: Promise<{ code: number | null } | null>) {
    channel.on("data", (c: Buffer) => this.out.push(c));
    channel.stderr.on("data", (c: Buffer) => this.errors.push(c));
    const ended = new Promise<void>((done) => channel.once("close", () => done()));
    this.closed = Promise.all([exit, ended]).then(([e]) => e?.code ?? null);
  }

  static async open(conn: SshConnection, script: string, opts: PipeOptions): Promise<SshPipe> {
    const { channel, exit } = await conn.exec(`sh -c ${shq(script)}`);
    const pipe = new SshPipe(channel, exit);
    if (opts.stdinFile !== undefined) {
      const { createReadStream } = await import("node:fs");
      createReadStream(opts.stdinFile).pipe(channel);
    }
    return pipe;
  }

  onData(cb: (chunk: Uint8Array) => void): void {
    this.out.listen(cb);
  }

  write(data: string): void {
    this.channel.write(data);
  }

  stderrTail(): string {
    return this.errors.toString();
  }

  close(): void {
    this.channel.end();
    const timer = setTimeout(() => this.channel.close(), CLOSE_GRACE_MS);
    timer.unref?.();
    void this.closed.then(() => clearTimeout(timer));
  }
}
