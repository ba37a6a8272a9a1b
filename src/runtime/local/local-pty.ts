import type { ProcessHandle, SpawnSpec } from "../types.ts";
import { LocalProcess, spawnChild, type Started } from "./local-process.ts";
import { watchdog } from "../process-groups/watchdog.ts";

const EOF = "\x04";

/**
 * Local processes under a pseudo-terminal (Bun's built-in `terminal` spawn option). The
 * child leads a new session whose controlling terminal is the PTY, so `[ -t 0 ]` holds,
 * Ctrl-C reaches its foreground job, and `tput cols` sees the size. stdout and stderr
 * arrive merged on one stream.
 */
export async function spawnLocalPty(spec: SpawnSpec): Promise<ProcessHandle> {
  const size = spec.tty!;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;
  const stdout = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  const end = () => {
    if (ended) return;
    ended = true;
    try {
      controller.close();
    } catch {}
  };
  const started = await spawnChild(spec, {
    terminal: {
      cols: size.cols,
      rows: size.rows,
      // Copy: the callback's buffer is not ours to keep once it returns.
      data: (_t: Bun.Terminal, bytes: Uint8Array) => {
        if (!ended) controller.enqueue(bytes.slice());
      },
      // Its code is a PTY status (1 = EIO on a normal exit), not the child's: only EOF matters.
      exit: end,
    },
  });
  const handle = new LocalPtyHandle(started, stdout, end);
  if (spec.stdin !== null && spec.stdin !== "pipe") {
    void handle.write(spec.stdin.text).then(() => handle.closeStdin());
  }
  return handle;
}

class LocalPtyHandle extends LocalProcess implements ProcessHandle {
  readonly stderr = null;
  private terminal: Bun.Terminal;
  private lastByte = 10;
  private disposed = false;

  constructor(
    started: Started<Bun.Subprocess>,
    readonly stdout: ReadableStream<Uint8Array>,
    private endStream: () => void,
  ) {
    super(started, true);
    this.terminal = started.proc.terminal!;
  }

  /** A terminal can always be typed into while it is open; EOF is just a character. */
  get stdinOpen() {
    return !this.disposed;
  }

  async write(bytes: Uint8Array | string): Promise<number> {
    if (this.disposed) throw new Error("the terminal is closed");
    const data = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
    if (data.byteLength === 0) return 0;
    this.terminal.write(data);
    this.lastByte = data[data.byteLength - 1]!;
    return data.byteLength;
  }

  /**
   * EOF on a terminal is Ctrl-D at the start of a line: after a partial line the first
   * Ctrl-D only hands that line over, so a second one is needed.
   */
  closeStdin(): void {
    if (this.disposed) return;
    const atLineStart = this.lastByte === 10 || this.lastByte === 13 || this.lastByte === 4;
    this.terminal.write(atLineStart ? EOF : EOF + EOF);
    this.lastByte = 4;
  }

  /**
   * Signals every process group of the session (an interactive shell puts each job in a
   * group of its own). An interactive bash ignores SIGTERM but exits on SIGHUP, which it
   * also passes on to its jobs — so a terminate sends both, as closing a terminal would.
   */
  override signal(signal: NodeJS.Signals): void {
    if (signal === "SIGTERM") super.signal("SIGHUP");
    super.signal(signal);
  }

  /** Always close: the terminal stays open after the child exits and its fd would leak. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.limit?.release(this.emptied);
    this.taskGone();
    try {
      this.terminal.close();
    } catch {}
    this.endStream();
    if (this.watched) watchdog().untrack(this.pgid);
  }
}
