import { closeSync } from "node:fs";
import { constants } from "node:os";
import { sendWithFds, messageSocketPair } from "../kernel/fd-passing.ts";
import { closeQuietly, createPipe, pipeOf } from "../kernel/pipes.ts";
import { watchdog } from "../process-groups/watchdog.ts";
import { helperExec } from "./helper-binary.ts";
import { signalName } from "../signal-names.ts";
import { helperEnv, type Restrictions } from "./start.ts";

/** A command's fds for its spawner: its stdio, the task cgroup it is born in, its process limit's `tasks` file. */
export interface ServedFds {
  stdout: number;
  stderr: number;
  cgroup: number;
  pids: number | null;
  stdin: number | null;
}

/** Larger requests (a huge environment) are started the usual way: one message must fit the socket. */
const MAX_MESSAGE = 128 * 1024;
/** The most a request's header takes: the names of the fds it carries (`oecpi`) and a NUL. */
const HEADER_BYTES = 6;
/** The longest wait for room in a spawner's socket before looking again (room()). */
const ROOM_WAIT_MS = 100;
const RECORD_BYTES = 12;
const STARTED = 1;
const FAILED = 2;
const ENDED = 3;

/**
 * A command a spawner started: its pid and, once it ends, its status, as Bun.Subprocess has
 * them (what LocalProcess reads). `lost`: its spawner ended first, so its status never came.
 */
export class ServedChild {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  lost: string | null = null;
  readonly exited: Promise<void>;
  private resolveExited!: () => void;

  constructor(readonly pid: number) {
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));
  }

  /** Its wait status, as waitpid() gives it. */
  end(status: number): void {
    const signal = status & 0x7f;
    if (signal === 0) this.exitCode = (status >> 8) & 0xff;
    else this.signalCode = signalName(signal) ?? "SIGKILL";
    this.resolveExited();
  }

  endLost(reason: string): void {
    this.lost = reason;
    this.resolveExited();
  }
}

/**
 * One kept spawner (agent-shell-helper `serve`): a small process that entered a sandbox and
 * restricted itself once, and forks each command it is sent straight into the command's task
 * cgroup. A command then costs a message and a fork in a process of a few pages, where a helper
 * per command costs Bun's spawn, the helper's exec and start-up, entering the namespaces and
 * compiling the seccomp filter again. Its commands are its children: their statuses come back
 * on the status pipe, with no monitor process between.
 */
export class Spawner {
  private readonly starts: Array<{ resolve: (child: ServedChild) => void; reject: (e: Error) => void }> = [];
  private readonly children = new Map<number, ServedChild>();
  private control: number;
  private ended = false;
  private retiring = false;
  /** Resolves when the spawner has ended (its status pipe closed). */
  readonly done: Promise<void>;

  private constructor(
    private readonly proc: Bun.Subprocess,
    control: number,
    status: number,
  ) {
    this.control = control;
    this.done = this.readStatus(status);
  }

  /** A spawner made in and restricted by `plan`, once. */
  static start(plan: Restrictions): Spawner {
    const [control, controlChild] = messageSocketPair();
    const [statusR, statusW] = createPipe();
    const helper = helperExec();
    const args = [helper.file, "serve", "--control", "3", "--status", "4"];
    const extra = [controlChild, statusW];
    const opened: number[] = [];
    const pass = (flag: string, fd: number) => {
      args.push(flag, String(3 + extra.length));
      extra.push(fd);
    };
    try {
      for (const fd of plan.namespaces) pass("--ns", fd);
      if (plan.dropCapabilities) args.push("--drop-caps");
      if (plan.landlock !== null) pass("--landlock", opened[opened.push(pipeOf(Buffer.from(plan.landlock))) - 1]!);
      if (plan.seccomp) pass("--seccomp", opened[opened.push(pipeOf(plan.seccomp)) - 1]!);
      const proc = Bun.spawn(args, { argv0: helper.argv0, stdio: ["ignore", "ignore", "ignore", ...extra], cwd: "/", env: helperEnv(), detached: true } as never);
      watchdog().track(proc.pid);
      return new Spawner(proc, control, statusR);
    } catch (e) {
      closeQuietly(control);
      closeQuietly(statusR);
      throw e;
    } finally {
      for (const fd of [controlChild, statusW, ...opened]) closeSync(fd);
    }
  }

  /** Whether it still takes commands. */
  get alive(): boolean {
    return !this.ended && this.control >= 0;
  }

  /** Callers waiting for room in its socket (room()). */
  private roomWaiters: Array<() => void> = [];

  /** How many of its commands still run. */
  get running(): number {
    return this.children.size;
  }

  /**
   * Starts `request` (spawn-helper/start.ts encodeRequest) with `fds`; resolves with the
   * command once it runs, rejects if it could not start. Null when the request cannot be
   * sent (too large, the socket full or closed): start it another way. The caller closes
   * its copies of `fds` as soon as this returns.
   */
  spawn(request: string, fds: ServedFds): Promise<ServedChild> | null {
    if (!this.alive) return null;
    const names = ["o", "e", "c"];
    const list = [fds.stdout, fds.stderr, fds.cgroup];
    if (fds.pids !== null) names.push("p"), list.push(fds.pids);
    if (fds.stdin !== null) names.push("i"), list.push(fds.stdin);
    const message = Buffer.from(`${names.join("")}\0${request}`);
    if (Spawner.tooLarge(request) || !sendWithFds(this.control, message, list)) return null;
    return new Promise((resolve, reject) => this.starts.push({ resolve, reject }));
  }

  /** Whether a request is too large for a message (it must start another way). */
  static tooLarge(request: string): boolean {
    return Buffer.byteLength(request) + HEADER_BYTES > MAX_MESSAGE;
  }

  /**
   * Resolves when it is this caller's turn to try again: one waiter, oldest first, for each
   * request the spawner has taken in (it reported a start), or after ROOM_WAIT_MS. A burst
   * fills its socket faster than it forks; a request that did not fit waits for room rather
   * than start the costly way (a helper of its own, ~15 ms). (Waking every waiter at each
   * start made a burst of 1,000 retry a million times.)
   */
  room(): Promise<void> {
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        const at = this.roomWaiters.indexOf(waiter);
        if (at >= 0) this.roomWaiters.splice(at, 1);
        resolve();
      };
      const timer = setTimeout(waiter, ROOM_WAIT_MS);
      this.roomWaiters.push(waiter);
    });
  }

  /** No more commands: it ends once the ones it runs have (their statuses still come). */
  retire(): void {
    this.retiring = true;
    if (this.children.size === 0) this.close();
  }

  /** No more commands: it ends now (its running commands go on; their statuses are then lost). */
  close(): void {
    if (this.control < 0) return;
    closeQuietly(this.control);
    this.control = -1;
  }

  /** Ends it at once (the server is exiting). */
  kill(): void {
    this.close();
    try {
      this.proc.kill("SIGKILL");
    } catch {}
  }

  private async readStatus(fd: number): Promise<void> {
    let pending = new Uint8Array(0);
    try {
      for await (const chunk of Bun.file(fd).stream()) {
        const bytes = pending.byteLength ? Buffer.concat([pending, chunk]) : chunk;
        const whole = bytes.byteLength - (bytes.byteLength % RECORD_BYTES);
        const view = new DataView(bytes.buffer, bytes.byteOffset, whole);
        for (let at = 0; at < whole; at += RECORD_BYTES) this.record(view.getInt32(at, true), view.getInt32(at + 4, true), view.getInt32(at + 8, true));
        pending = bytes.slice(whole);
      }
    } catch {
      /* a read error ends it like EOF */
    }
    closeQuietly(fd);
    this.ended = true;
    this.close();
    watchdog().untrack(this.proc.pid);
    for (const start of this.starts.splice(0)) start.reject(new Error("the spawner ended"));
    for (const child of this.children.values()) child.endLost("agent-shell's spawner of this command ended unexpectedly; its exit status is unknown");
    this.children.clear();
  }

  private record(kind: number, pid: number, value: number): void {
    if (kind === ENDED) {
      const child = this.children.get(pid);
      this.children.delete(pid);
      child?.end(value);
      if (this.retiring && this.children.size === 0) this.close();
      return;
    }
    const start = this.starts.shift();
    this.roomWaiters[0]?.();
    if (!start) return;
    if (kind === STARTED) {
      const child = new ServedChild(pid);
      this.children.set(pid, child);
      start.resolve(child);
    } else if (kind === FAILED) start.reject(new Error(`the spawner could not start the command (errno ${value})`));
  }
}
