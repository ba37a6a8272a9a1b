import { rmSync } from "node:fs";
import type { ExitStatus, ProcessHandle } from "../../runtime/types.ts";
import { Collector } from "../output/collector.ts";
import { terminateGroup } from "./killer.ts";
import { OutputStream } from "../output/stream.ts";
import type { TerminalScreen } from "../terminal/screen.ts";

export type TaskKind = "bash" | "task";
export type TaskStatus = "running" | "completed" | "killed" | "lost";

/** After the leader exits, how long to wait for the output pipes to close by themselves. */
const DRAIN_AFTER_EXIT_MS = 400;
/** After terminating the leftovers, how long to wait for EOF before abandoning the pipes. */
const DRAIN_AFTER_KILL_MS = 1000;

export interface TaskInit {
  kind: TaskKind;
  command?: string;
  prompt?: string;
  description?: string;
  name?: string;
  cwd: string;
  host?: string;
  tty: boolean;
  killGraceMs: number;
  stdout: OutputStream;
  stderr: OutputStream;
  /** Folder holding this task's log files, removed when the task is forgotten. */
  logDir?: string;
  /** For tasks recovered from an earlier registry. */
  startedAt?: Date;
  /** tty tasks: the raw PTY bytes (spooled) and the emulator rendering them into `stdout`. */
  ttyOutput?: { raw: OutputStream; screen: TerminalScreen };
  /** Started with a writable stdin pipe (`keep_stdin_open`). */
  keepStdinOpen?: boolean;
  /** The containment applied (SPEC §11): mode label and level. */
  sandbox?: TaskSandbox;
}

export interface TaskSandbox {
  mode: string;
  level?: string;
  /** Writable roots of the policy, to tell a denial outside them from any other failure. */
  writableRoots?: string[];
  network?: boolean;
}

/**
 * One process (a task) and its output. The status leaves `running` exactly once, in
 * `finish`, so races between exit, kill and loss are decided in one place.
 */
export class Task {
  id: string | null = null;
  readonly kind: TaskKind;
  readonly command?: string;
  readonly prompt?: string;
  readonly description?: string;
  readonly name?: string;
  readonly cwd: string;
  readonly host?: string;
  readonly tty: boolean;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  logDir?: string;
  readonly startedAt: Date;
  readonly rawOutput?: OutputStream;
  readonly terminal?: TerminalScreen;
  readonly keepStdinOpen: boolean;
  readonly sandbox?: TaskSandbox;
  /** When the child last wrote anything (for waiting-for-input detection). */
  lastOutputAtMs = performance.now();
  endedAt: Date | null = null;
  status: TaskStatus = "running";
  exit: ExitStatus | null = null;
  lostReason?: string;
  handle: ProcessHandle | null = null;
  /** Resolves when the task has ended and its output is complete. */
  readonly ended: Promise<void>;
  private resolveEnded!: () => void;
  private killRequested = false;
  private killing: Promise<void> | null = null;
  private readonly killGraceMs: number;
  private endListeners: Array<(task: Task) => void> = [];

  constructor(init: TaskInit) {
    this.kind = init.kind;
    this.command = init.command;
    this.prompt = init.prompt;
    this.description = init.description;
    this.name = init.name;
    this.cwd = init.cwd;
    this.host = init.host;
    this.tty = init.tty;
    this.killGraceMs = init.killGraceMs;
    this.stdout = init.stdout;
    this.stderr = init.stderr;
    this.logDir = init.logDir;
    this.startedAt = init.startedAt ?? new Date();
    this.rawOutput = init.ttyOutput?.raw;
    this.terminal = init.ttyOutput?.screen;
    this.keepStdinOpen = init.keepStdinOpen === true;
    this.sandbox = init.sandbox;
    this.ended = new Promise((r) => (this.resolveEnded = r));
  }

  get pid(): number | undefined {
    return this.handle?.pid;
  }

  get running(): boolean {
    return this.status === "running";
  }

  get durationMs(): number {
    return (this.endedAt ?? new Date()).getTime() - this.startedAt.getTime();
  }

  onEnd(listener: (task: Task) => void): void {
    this.endListeners.push(listener);
  }

  /** Attach the spawned process and follow it to its end. */
  attach(handle: ProcessHandle): void {
    this.handle = handle;
    // A tty's bytes go to the raw stream, whose emulator renders them into `stdout`.
    const first = this.rawOutput ?? this.stdout;
    const collectors = [new Collector(handle.stdout, first)];
    if (handle.stderr) collectors.push(new Collector(handle.stderr, this.stderr));
    for (const s of [first, this.stderr]) s.onData(() => (this.lastOutputAtMs = performance.now()));
    const screen = this.terminal;
    if (screen) {
      first.onData((chunk) => screen.feed(chunk));
      screen.onReply((reply) => void handle.write(reply).catch(() => {}));
    }
    void this.follow(handle, collectors);
  }

  private async follow(handle: ProcessHandle, collectors: Collector[]): Promise<void> {
    const exit = await handle.exited;
    const drained = Promise.all(collectors.map((c) => c.done));
    // Output still open after the leader's exit belongs to leftovers in its group:
    // give them a moment, then terminate them. A task leaves nothing running.
    await Promise.race([drained, Bun.sleep(DRAIN_AFTER_EXIT_MS)]);
    if (await handle.groupAlive()) {
      await Promise.race([this.killGroup(), Bun.sleep(DRAIN_AFTER_KILL_MS)]);
    }
    if (!collectors.every((c) => c.eof)) {
      await Promise.race([drained, Bun.sleep(DRAIN_AFTER_KILL_MS)]);
      for (const c of collectors) c.abandon();
      await drained;
    }
    handle.dispose();
    if (this.terminal) {
      this.terminal.finish();
      this.stdout.spool?.close();
    }
    if (exit.lost) this.finish("lost", null, exit.lost);
    else if (this.killRequested) this.finish("killed", exit);
    else if (exit.unknown) this.finish("lost", null, "the process ended after agent-shell restarted; its exit status is unknown");
    else this.finish("completed", exit);
  }

  /** Terminates the task's whole process group; resolves when the group is gone. */
  kill(): Promise<void> {
    if (!this.running) return Promise.resolve();
    this.killRequested = true;
    return this.killGroup();
  }

  private killGroup(): Promise<void> {
    if (!this.handle) return Promise.resolve();
    this.killing ??= terminateGroup(this.handle, this.killGraceMs).finally(() => (this.killing = null));
    return this.killing;
  }

  /** The one place where a task leaves `running`. */
  finish(status: Exclude<TaskStatus, "running">, exit: ExitStatus | null, lostReason?: string): void {
    if (!this.running) return;
    this.status = status;
    this.exit = exit;
    if (lostReason) this.lostReason = lostReason;
    this.endedAt = new Date();
    this.resolveEnded();
    for (const l of this.endListeners) l(this);
  }

  removeLogs(): void {
    this.stdout.spool?.close();
    this.stderr.spool?.close();
    this.rawOutput?.spool?.close();
    if (this.logDir) rmSync(this.logDir, { recursive: true, force: true });
  }

  /** `exit_code` as results show it: the code, or -1 when a signal ended the task. */
  get exitCode(): number | undefined {
    if (!this.exit) return undefined;
    return this.exit.signal ? -1 : (this.exit.code ?? -1);
  }
}
