import type { NetworkDenied } from "../../sandbox/network/calls.ts";
import { rm } from "node:fs/promises";
import type { ExitStatus, ProcessHandle } from "../../runtime/types.ts";
import type { PlantReport } from "../../sandbox/planted/plant-watch.ts";
import { Collector } from "../output/collector.ts";
import { terminateGroup } from "./killer.ts";
import { within } from "../../first-of.ts";
import type { OutputStream } from "../output/stream.ts";
import type { TerminalScreen } from "../terminal/screen.ts";

export type TaskKind = "bash" | "task";
export type TaskStatus = "running" | "completed" | "killed" | "lost";

/** After the leader exits, how long to wait for the output pipes to close by themselves. */
const DRAIN_AFTER_EXIT_MS = 400;
/** After terminating the leftovers, how long to wait for EOF before abandoning the pipes. */
const DRAIN_AFTER_KILL_MS = 1000;
/** Without a task cgroup to say when it empties, how often kept leftovers are looked for. */
const LEFTOVERS_POLL_MS = 250;

/**
 * Told the pids of what the leader left running when it exited; true keeps them: the task
 * runs on until they end (SPEC §25), false ends them.
 */
export type LeftoversHook = (pids: number[]) => Promise<boolean>;

/** What a task is: fixed at launch (or read back from meta.json), never changed. */
export interface TaskInfo {
  kind: TaskKind;
  command?: string;
  prompt?: string;
  description?: string;
  name?: string;
  cwd: string;
  host?: string;
  tty: boolean;
  /** The kept output of a foreground call (its `output_task_id`), not a task the agent started: task_list leaves it out. */
  kept_output?: true;
}

export interface TaskInit {
  info: TaskInfo;
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
  /** Paths hidden from commands (secrets, agent-shell's state): a denial there is of another kind. */
  hidden?: string[];
  network?: boolean;
  /** What was undone of the command's plants (SPEC §25, §26), filled as it is found. */
  planted?: PlantReport;
  /** Connections the proxy refused while it ran (SPEC §21), filled as they happen. */
  networkDenied?: NetworkDenied[];
}

/**
 * One process (a task) and its output. Its state changes only through its methods; the
 * status leaves `running` exactly once, in `finish`, so races between exit, kill and loss
 * are decided in one place.
 */
export class Task {
  readonly info: TaskInfo;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** When the current run started (a restart in place starts a new run under the same id). */
  startedAt: Date;
  /** How many times this task was started again in place (restart verb or restart policy). */
  restarts = 0;
  /** Counts kills by the user: a restart whose spawn a kill overtook does not go on. */
  killEpoch = 0;
  /** Starts the same command again (background tasks); set by the launcher. */
  relaunch?: () => Promise<ProcessHandle>;
  /** Cancels a restart the restart policy has scheduled; a kill by the user calls it. */
  cancelPendingRestart: (() => void) | null = null;
  /** Readiness arguments the task was started with, replayed by a restart. */
  serviceArgs?: Record<string, unknown>;
  /** Shown by `ps`/task_list: the policy that restarts this task when it exits. */
  restartPolicy?: { on: "failure" | "always"; maxRestarts?: number; delayMs: number };
  readonly rawOutput?: OutputStream;
  readonly terminal?: TerminalScreen;
  readonly keepStdinOpen: boolean;
  readonly sandbox?: TaskSandbox;
  /** Resolves once a background task's log files exist (SPEC §5: from launch); results with their paths wait for it. */
  logsReady: Promise<void> = Promise.resolve();
  /** Resolves when the task has ended and its output is complete. */
  ended: Promise<void>;
  private taskId: string | null = null;
  private currentLogDir?: string;
  private lastOutputAt = performance.now();
  private endTime: Date | null = null;
  private state: TaskStatus = "running";
  private exitStatus: ExitStatus | null = null;
  private lossReason?: string;
  private handle: ProcessHandle | null = null;
  /** When this run's output pipes have both closed (or were abandoned). */
  private outputClosed: Promise<unknown> = Promise.resolve();
  private resolveEnded!: () => void;
  private killRequested = false;
  /** A kill made this run's end certain (killer.ts terminateGroup); `running` until its exit has arrived. */
  endCertain = false;
  private killing: Promise<void> | null = null;
  private readonly killGraceMs: number;
  private endListeners: Array<(task: Task) => void> = [];
  /** The leader's own exit and when it came: before the task's end when it left processes running. */
  private leaderExit: { status: ExitStatus; at: Date } | null = null;
  /** Set while someone decides what becomes of processes the leader leaves running (a foreground call); unset, they are ended. */
  onLeftovers: LeftoversHook | null = null;

  constructor(init: TaskInit) {
    this.info = init.info;
    this.killGraceMs = init.killGraceMs;
    this.stdout = init.stdout;
    this.stderr = init.stderr;
    this.currentLogDir = init.logDir;
    this.startedAt = init.startedAt ?? new Date();
    this.rawOutput = init.ttyOutput?.raw;
    this.terminal = init.ttyOutput?.screen;
    this.keepStdinOpen = init.keepStdinOpen === true;
    this.sandbox = init.sandbox;
    this.ended = new Promise((r) => (this.resolveEnded = r));
  }

  /** `bg-N` once the registry made it a background task; null in the foreground. */
  get id(): string | null {
    return this.taskId;
  }

  /** Called by the registry when it makes the task visible. */
  assignId(id: string): void {
    this.taskId = id;
  }

  get logDir(): string | undefined {
    return this.currentLogDir;
  }

  /** The log folder was moved (a foreground task adopted into the background). */
  relocateLogs(dir: string): void {
    this.currentLogDir = dir;
  }

  /** `killed` as soon as a kill has made the end certain (its exit is recorded when it arrives). */
  get status(): TaskStatus {
    return this.state === "running" && this.endCertain ? "killed" : this.state;
  }

  get exit(): ExitStatus | null {
    return this.exitStatus;
  }

  get lostReason(): string | undefined {
    return this.lossReason;
  }

  get endedAt(): Date | null {
    return this.endTime;
  }

  /** When the child last wrote anything (for waiting-for-input detection). */
  get lastOutputAtMs(): number {
    return this.lastOutputAt;
  }

  get pid(): number | undefined {
    return this.handle?.pid;
  }

  get pgid(): number | undefined {
    return this.handle?.pgid;
  }

  /** The leader's pid inside its sandbox's pid namespace while it runs, when that differs from `pid`. */
  get sandboxPid(): number | null {
    return (this.running && this.handle?.sandboxPid) || null;
  }

  /** The command's (leader's) own exit, once it came, and how long it ran. */
  get commandExit(): { status: ExitStatus; durationMs: number } | null {
    const e = this.leaderExit;
    return e && { status: e.status, durationMs: e.at.getTime() - this.startedAt.getTime() };
  }

  /** The runtime's remark about the running process (e.g. reconnecting), if any. */
  get note(): string | null {
    return (this.running && this.handle?.note) || null;
  }

  get resumeToken(): string | undefined {
    return this.handle?.resumeToken;
  }

  get running(): boolean {
    return this.state === "running";
  }

  /** Some client has been shown this task's final status (eviction takes such tasks first). */
  finalStatusRead = false;

  get durationMs(): number {
    return (this.endTime ?? new Date()).getTime() - this.startedAt.getTime();
  }

  /** Whether input can still be written to the running process. */
  get stdinOpen(): boolean {
    return this.running && this.handle !== null && this.handle.stdinOpen;
  }

  /** Whether the process sits reading its stdin (true/false), or null when it can't be told. */
  blockedOnInput(): boolean | null {
    return this.handle?.blockedOnInput?.() ?? null;
  }

  /** Writes to the process's stdin; the number of bytes written. */
  write(data: string): Promise<number> {
    if (!this.handle) return Promise.resolve(0);
    return this.handle.write(data);
  }

  closeStdin(): void {
    this.handle?.closeStdin();
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
    for (const s of [first, this.stderr]) s.onData(() => (this.lastOutputAt = performance.now()));
    const screen = this.terminal;
    if (screen) {
      first.onData((chunk) => screen.feed(chunk));
      screen.onReply((reply) => void handle.write(reply).catch(() => {}));
    }
    const drained = Promise.all(collectors.map((c) => c.done));
    this.outputClosed = drained;
    void this.follow(handle, collectors, drained);
  }

  private async follow(handle: ProcessHandle, collectors: Collector[], drained: Promise<unknown>): Promise<void> {
    const exit = await handle.exited;
    this.leaderExit = { status: exit, at: new Date() };
    // Output still open after the leader's exit belongs to leftovers in its group: give them
    // a moment; then they are kept if whoever awaits the task says so (and the task runs on
    // while they do), else terminated. Nothing is left running without a task holding it.
    if (!collectors.every((c) => c.eof)) await within(drained, DRAIN_AFTER_EXIT_MS);
    if (await handle.groupAlive()) {
      const kept = !this.killRequested && this.onLeftovers !== null && handle.members !== undefined && (await this.onLeftovers(handle.members()));
      if (kept) await this.leftoversGone(handle);
      if (await handle.groupAlive()) await within(this.killGroup(), DRAIN_AFTER_KILL_MS);
    }
    if (!collectors.every((c) => c.eof)) {
      await within(drained, DRAIN_AFTER_KILL_MS);
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

  /** Resolves once nothing of the task is left: by its cgroup's word, or by looking now and then. */
  private async leftoversGone(handle: ProcessHandle): Promise<void> {
    if (handle.whenGone) {
      while (!(await handle.whenGone(60_000))) {}
      return;
    }
    while (await handle.groupAlive()) await Bun.sleep(LEFTOVERS_POLL_MS);
  }

  /**
   * Starts a new run of an ended task under the same id, same streams (its logs go on in
   * the same files): a restart in place. Status leaves `running` once per run.
   */
  respawn(handle: ProcessHandle): void {
    if (this.running) throw new Error(`task ${this.id} is still running`);
    this.state = "running";
    this.exitStatus = null;
    this.endTime = null;
    this.lossReason = undefined;
    this.killRequested = false;
    this.endCertain = false;
    this.leaderExit = null;
    this.startedAt = new Date();
    this.restarts++;
    this.ended = new Promise((r) => (this.resolveEnded = r));
    for (const s of [this.stdout, this.stderr, this.rawOutput]) s?.spool?.reopen();
    this.attach(handle);
  }

  /** Terminates the task's whole process group; resolves when the group is gone. */
  kill(): Promise<void> {
    // A kill by the user also cancels a restart the policy has scheduled.
    this.cancelPendingRestart?.();
    this.killEpoch++;
    if (!this.running) return Promise.resolve();
    this.killRequested = true;
    return this.killGroup();
  }

  private killGroup(): Promise<void> {
    if (!this.handle) return Promise.resolve();
    const handle = this.handle;
    this.killing ??= terminateGroup(handle, this.killGraceMs, this.outputClosed)
      .then((certain) => {
        if (certain && this.killRequested && this.handle === handle && this.running) this.endCertain = true;
      })
      .finally(() => (this.killing = null));
    return this.killing;
  }

  /** The one place where a task leaves `running` (`endedAt`: when a recovered task ended). */
  finish(status: Exclude<TaskStatus, "running">, exit: ExitStatus | null, lostReason?: string, endedAt = new Date()): void {
    if (!this.running) return;
    this.state = status;
    this.exitStatus = exit;
    if (lostReason) this.lossReason = lostReason;
    this.endTime = endedAt;
    this.resolveEnded();
    for (const l of this.endListeners) l(this);
  }

  /**
   * Deletes the task's folder off the event loop: a thousand tasks forgotten at once (killed
   * past the finished-task cap) cost the loop 1.3 s of rmSync. Registry.shutdown awaits them.
   */
  removeLogs(): void {
    this.dropLogs();
    const dir = this.currentLogDir;
    if (!dir) return;
    const removal = rm(dir, { recursive: true, force: true })
      .catch(() => {})
      .finally(() => removals.delete(removal));
    removals.add(removal);
  }

  /** Deletes the log files (meta.json stays), `why` becomes their spool_error; returns the bytes freed. */
  dropLogs(why?: string): number {
    return [this.stdout, this.stderr, this.rawOutput].reduce((freed, s) => freed + (s?.spool?.discard(why) ?? 0), 0);
  }

  /** `exit_code` as results show it: the code, or -1 when a signal ended the task. */
  get exitCode(): number | undefined {
    if (!this.exitStatus) return undefined;
    return this.exitStatus.signal ? -1 : (this.exitStatus.code ?? -1);
  }
}

/** Task folders being removed (removeLogs). */
const removals = new Set<Promise<void>>();

/** Resolves once every task folder removal begun so far is done. */
export async function logRemovalsDone(): Promise<void> {
  await Promise.all([...removals]);
}
