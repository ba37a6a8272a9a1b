import type { OwnerFolder } from "../state/state-dir.ts";
import { logRemovalsDone, type Task } from "./task.ts";
import { metaOf, writeMeta, writeMetaAsync } from "../state/task-meta.ts";
import { formatTaskId, taskIdNumber } from "./task-id.ts";

export interface RegistryOptions {
  /** Finished tasks are forgotten (and their logs deleted) after this long. */
  taskTtlMs: number;
  /** At most this many finished tasks are kept once read; the oldest read ones go first. */
  maxFinishedTasks: number;
  /** Where task metadata is recorded (meta.json per task, the id counter). */
  owner: OwnerFolder;
}

/**
 * Owns background tasks: ids (`bg-N`, never reused), lookup, expiry, and the shutdown
 * that leaves nothing running. Foreground tasks are tracked too (without an id) so that
 * shutdown reaches them.
 */
export class Registry {
  private tasks = new Map<string, Task>();
  private foreground = new Set<Task>();
  private nextId: number;
  private endListeners = new Set<(task: Task) => void>();
  private noticeListeners = new Set<(data: Record<string, unknown>) => void>();
  private stopping = false;
  private expiryTimers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Whether the map's order is the id order (see keep()). */
  private inIdOrder = true;
  private highestId = 0;

  constructor(private readonly options: RegistryOptions) {
    this.nextId = options.owner.readLastId() + 1;
  }

  /** Called once per background task when it leaves `running`. */
  onTaskEnd(listener: (task: Task) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  /** Notices about tasks (output watches) for whoever relays them, e.g. as MCP log messages. */
  onNotice(listener: (data: Record<string, unknown>) => void): () => void {
    this.noticeListeners.add(listener);
    return () => this.noticeListeners.delete(listener);
  }

  notice(data: Record<string, unknown>): void {
    for (const l of this.noticeListeners) l(data);
  }

  /** Reserve the next id; one counter for every kind of task. */
  allocateId(): string {
    const n = this.nextId++;
    this.options.owner.writeLastId(n);
    return formatTaskId(n);
  }

  /** Continue numbering after ids recovered from an earlier registry. */
  continueAfter(n: number): void {
    if (n >= this.nextId) this.nextId = n + 1;
  }

  /** Make a task visible to task_output/kill_shell/task_list (a background task). */
  register(task: Task, id = this.allocateId()): string {
    task.assignId(id);
    this.foreground.delete(task);
    this.keep(task);
    return id;
  }

  /** Take back a task recovered from an earlier registry (running or already over). */
  restore(task: Task): void {
    this.keep(task);
  }

  /** The one path for fresh and recovered tasks: recorded now, and handled once when it ends. */
  private keep(task: Task): void {
    // Ids are added in increasing order, except by recovery: only then does list() sort.
    const n = taskIdNumber(task.id!);
    if (!this.tasks.has(task.id!)) {
      if (n < this.highestId) this.inIdOrder = false;
      this.highestId = Math.max(this.highestId, n);
    }
    this.tasks.set(task.id!, task);
    this.persist(task);
    if (task.running) {
      task.onEnd((t) => {
        // meta.json follows every transition (SPEC §5): the end too.
        this.persistLater(t);
        for (const l of this.endListeners) l(t);
        this.retire(t);
      });
    } else {
      this.retire(task);
    }
  }

  /** A finished task: expires after the TTL, and the oldest go beyond the cap. */
  private retire(task: Task): void {
    this.scheduleExpiry(task);
    this.enforceFinishedCap();
  }

  private persist(task: Task): void {
    // A task that ends after close() (its kill settling late) must not recreate the folder.
    if (this.options.owner.closed) return;
    // A persistent registry is recovered from after a restart: a task is on disk before its
    // start is answered. A private one's records only serve a sweep after a crash, where the
    // watchdog has already killed its tasks: written off the event loop (a hundred starts at
    // once would spend ~0.2 ms each on synchronous file system calls).
    if (this.metaWrites.has(task) || !this.options.owner.persistent) return this.persistLater(task);
    writeMeta(this.options.owner.taskDir(task.id!), metaOf(task));
  }

  /** Meta writes in flight, one chain per task (so they land in order). */
  private metaWrites = new Map<Task, Promise<void>>();

  /**
   * A task's end is recorded off the event loop: nothing waits on it, and a hundred tasks
   * killed at once would otherwise spend ~0.5 ms each on synchronous file system calls.
   * Their status is already recorded as running (so a crash meanwhile leaves them to recovery).
   * Writes of one task land in order.
   */
  private persistLater(task: Task): void {
    if (this.options.owner.closed) return;
    const meta = metaOf(task);
    const dir = this.options.owner.taskDir(task.id!);
    // After the task's folder is made (off the event loop in a burst), not in its stead.
    const inPlace = !this.options.owner.persistent;
    const write = (this.metaWrites.get(task) ?? task.logsReady).then(() => (this.options.owner.closed ? undefined : writeMetaAsync(dir, meta, { inPlace })));
    this.metaWrites.set(task, write);
    void write.then(() => {
      if (this.metaWrites.get(task) === write) this.metaWrites.delete(task);
    });
  }

  /**
   * Records a task's state now (off the event loop) and resolves once it is on disk: a kill
   * made certain is in meta.json when kill_shell answers, before the exit arrives.
   */
  record(task: Task): Promise<void> {
    this.persistLater(task);
    return this.recorded([task]);
  }

  /** Resolves once what is being recorded of these tasks is on disk (a read after an end sees it there). */
  async recorded(tasks: Task[]): Promise<void> {
    await Promise.all(tasks.map((t) => this.metaWrites.get(t)));
  }

  /** Resolves once every meta write in flight has landed (before the folder is removed). */
  async metaWritten(): Promise<void> {
    while (this.metaWrites.size) await Promise.all(this.metaWrites.values());
  }

  /** Track a foreground task for shutdown; returns the untrack function. */
  trackForeground(task: Task): () => void {
    this.foreground.add(task);
    return () => this.foreground.delete(task);
  }

  get(id: string): Task | undefined {
    return this.tasks.get(id);
  }

  /** Tasks ordered by id number. */
  list(): Task[] {
    const tasks = [...this.tasks.values()];
    if (this.inIdOrder) return tasks;
    return tasks.sort((a, b) => taskIdNumber(a.id!) - taskIdNumber(b.id!));
  }

  /** A task by id, or by name: a name means the newest task of that name. */
  resolve(ref: string): Task | undefined {
    const byId = this.tasks.get(ref);
    if (byId) return byId;
    let newest: Task | undefined;
    for (const t of this.tasks.values()) if (t.info.name === ref && (!newest || taskIdNumber(t.id!) > taskIdNumber(newest.id!))) newest = t;
    return newest;
  }

  /** A task restarted in place runs again: it no longer expires, and meta.json says so. */
  revive(task: Task): void {
    task.finalStatusRead = false; // its next ending is news again
    const timer = this.expiryTimers.get(task.id!);
    if (timer) clearTimeout(timer);
    this.expiryTimers.delete(task.id!);
    this.persist(task);
  }

  /** Whether shutdown has begun (no task is started again after it). */
  get shuttingDown(): boolean {
    return this.stopping;
  }

  findRunningByName(name: string): Task | undefined {
    // A task whose kill is certain no longer holds its name, though its exit may not be recorded yet.
    for (const t of this.tasks.values()) if (t.running && !t.endCertain && t.info.name === name) return t;
    return undefined;
  }

  private scheduleExpiry(task: Task): void {
    const id = task.id!;
    const timer = setTimeout(() => this.forget(id), this.options.taskTtlMs);
    timer.unref?.();
    this.expiryTimers.set(id, timer);
  }

  /**
   * Clients were shown these tasks' final status: note it, and let the cap take them now.
   * Running tasks are ignored (their final status is still to come).
   */
  markFinalStatusRead(tasks: Task[]): void {
    let any = false;
    for (const t of tasks) {
      if (t.running || t.finalStatusRead) continue;
      t.finalStatusRead = true;
      any = true;
    }
    if (any) this.enforceFinishedCap();
  }

  /**
   * Beyond `maxFinishedTasks`, the oldest finished tasks whose final status a client has
   * read go first. An unread result is never dropped for room: it stays until its TTL
   * (SPEC §14), so the cap can be exceeded while results wait to be read.
   */
  private enforceFinishedCap(): void {
    // Runs on every task end (a thousand killed at once): counted without a copy, sorted only when over.
    let count = 0;
    for (const t of this.tasks.values()) if (!t.running) count++;
    const excess = count - this.options.maxFinishedTasks;
    if (excess <= 0) return;
    const read = [...this.tasks.values()].filter((t) => !t.running && t.finalStatusRead);
    // Most often one over (a task just ended): the oldest found in one pass, not by a sort.
    if (excess === 1 && read.length) return this.forget(read.reduce((a, b) => (b.endedAt! < a.endedAt! ? b : a)).id!);
    read.sort((a, b) => a.endedAt!.getTime() - b.endedAt!.getTime());
    for (const t of read.slice(0, excess)) this.forget(t.id!);
  }

  /**
   * Deletes the log files of the oldest finished tasks until `bytes` are freed (config
   * max_state_bytes); the tasks themselves, their status and what memory holds, stay.
   */
  freeLogSpace(bytes: number, maxStateBytes: number): void {
    const finished = [...this.tasks.values()].filter((t) => !t.running).sort((a, b) => a.endedAt!.getTime() - b.endedAt!.getTime());
    let freed = 0;
    for (const t of finished) {
      if (freed >= bytes) break;
      freed += t.dropLogs(`log files deleted to keep agent-shell's task logs under max_state_bytes (${maxStateBytes}), the oldest finished tasks' first; what memory holds is still shown`);
    }
  }

  /** Drop a finished task and its log files. */
  forget(id: string): void {
    const task = this.tasks.get(id);
    if (!task || task.running || task.cancelPendingRestart) return;
    this.tasks.delete(id);
    const timer = this.expiryTimers.get(id);
    if (timer) clearTimeout(timer);
    this.expiryTimers.delete(id);
    const writing = this.metaWrites.get(task);
    if (writing) void writing.then(() => task.removeLogs());
    else task.removeLogs();
  }

  /** Terminate every running task's process group (TERM → grace → KILL), in parallel. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    for (const t of this.tasks.values()) t.cancelPendingRestart?.();
    const running = [...this.tasks.values(), ...this.foreground].filter((t) => t.running);
    await Promise.all(running.map((t) => t.kill()));
    for (const timer of this.expiryTimers.values()) clearTimeout(timer);
    await this.metaWritten();
    await logRemovalsDone(); // a folder left half-removed would be recovered as a task
  }
}
