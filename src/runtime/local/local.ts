import { closeSync } from "node:fs";
import type { ProcessHandle, Runtime, SpawnSpec } from "../types.ts";
import { closeQuietly, createPipe } from "../kernel/pipes.ts";
import { LocalProcess, spawnChild, type Started } from "./local-process.ts";
import { localPortOpen } from "./port-probe.ts";
import { watchdog } from "../process-groups/watchdog.ts";
import { publishAll } from "../containment/network-attach.ts";
import { spawnLocalPty } from "./local-pty.ts";
import { spawnServed } from "./served-spawn.ts";

/**
 * Local processes on real pipes. Every child leads its own session and process group
 * (`detached: true` calls setsid), so it has no controlling terminal and the whole group
 * can be signalled at once. A `tty` spec runs under a pseudo-terminal instead (local-pty.ts).
 */
export class LocalRuntime implements Runtime {
  async spawn(spec: SpawnSpec): Promise<ProcessHandle> {
    return spec.tty ? spawnLocalPty(spec) : spawnLocalPipes(spec);
  }

  async portOpen(port: number): Promise<boolean> {
    // A port an allowlist sandbox's command listens on is reached through its publication on the host (SPEC §21).
    await publishAll();
    return localPortOpen(port);
  }
}

export async function spawnLocalPipes(spec: SpawnSpec): Promise<ProcessHandle> {
  const built = await spawnServed(spec);
  if (built) return feedStdin(spec, new LocalPipesHandle(built.started, built.stdout, built.stderr, built.stdin));
  const fds: number[] = [];
  try {
    const [outR, outW] = createPipe();
    fds.push(outR, outW);
    const [errR, errW] = createPipe();
    fds.push(errR, errW);
    let stdinR: number | null = null;
    let stdinW: number | null = null;
    if (spec.stdin !== null) {
      [stdinR, stdinW] = createPipe();
      fds.push(stdinR, stdinW);
    }
    const started = await spawnChild(spec, { stdin: stdinR ?? "ignore", stdout: outW, stderr: errW });
    // The child has its copies; ours must go or EOF never comes.
    for (const fd of [outW, errW, stdinR]) if (fd !== null) closeSync(fd);
    return feedStdin(spec, new LocalPipesHandle(started, outR, errR, stdinW));
  } catch (e) {
    fds.forEach(closeQuietly);
    throw e;
  }
}

/** A spec's stdin text is written, then closed. */
function feedStdin(spec: SpawnSpec, handle: LocalPipesHandle): ProcessHandle {
  if (spec.stdin !== null && spec.stdin !== "pipe") {
    const text = spec.stdin.text;
    void handle.write(text).finally(() => handle.closeStdin());
  }
  return handle;
}

class LocalPipesHandle extends LocalProcess implements ProcessHandle {
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  private stdinSink: ReturnType<ReturnType<typeof Bun.file>["writer"]> | null = null;
  private disposed = false;

  constructor(
    started: Started,
    private outFd: number,
    private errFd: number,
    private stdinFd: number | null,
  ) {
    super(started);
    this.stdout = Bun.file(outFd).stream();
    this.stderr = Bun.file(errFd).stream();
    if (stdinFd !== null) this.stdinSink = Bun.file(stdinFd).writer();
  }

  get stdinOpen() {
    return this.stdinFd !== null;
  }

  async write(bytes: Uint8Array | string): Promise<number> {
    if (!this.stdinSink) throw new Error("stdin is closed");
    const n = typeof bytes === "string" ? Buffer.byteLength(bytes) : bytes.byteLength;
    try {
      this.stdinSink.write(bytes);
      await this.stdinSink.flush();
    } catch {
      /* the reader went away (EPIPE): the child no longer reads stdin */
    }
    return n;
  }

  closeStdin(): void {
    if (this.stdinFd === null) return;
    try {
      this.stdinSink?.end();
    } catch {}
    closeQuietly(this.stdinFd);
    this.stdinSink = null;
    this.stdinFd = null;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.limit?.release(this.emptied);
    this.taskGone();
    this.closeStdin();
    closeQuietly(this.outFd);
    closeQuietly(this.errFd);
    if (this.watched) watchdog().untrack(this.pgid);
  }
}
