import type { NetworkCall } from "../sandbox/network/calls.ts";
import type { PlantReport } from "../sandbox/planted/plant-watch.ts";
import type { SandboxRun } from "../sandbox/setup.ts";

/**
 * The one seam every runtime implements. Nothing above this layer knows whether a
 * process is local or remote, piped or on a terminal.
 */

export interface SpawnSpec {
  /** Run with `bash -c` (unless `argv` is given). */
  command: string;
  /** Run this program directly, with no shell in between (subagents). */
  argv?: string[];
  cwd: string;
  /** The complete environment of the child (the caller merges inherited + overrides). */
  env: Record<string, string>;
  /**
   * `null`: stdin is /dev/null. `"pipe"`: a writable stdin the caller may write and close.
   * A string: fed to the command, then closed.
   */
  stdin: null | "pipe" | { text: string };
  /** Run under a pseudo-terminal of this size; stdout and stderr arrive merged on stdout. */
  tty?: { cols: number; rows: number };
  /** Background work that should outlive the runtime's connection (remote runtimes run it detached). */
  durable?: boolean;
  /** Run inside this OS sandbox (SPEC §11); local runtimes only. */
  sandbox?: SandboxRun;
  /** Where what a sandboxed command planted and was undone is reported (SPEC §25, §26), as it is found. */
  plantReport?: PlantReport;
  /** Whom an allowlist sandbox's proxy asks about a name, and where it reports refusals (SPEC §21). */
  network?: NetworkCall;
}

export interface ExitStatus {
  /** Exit code, or null when a signal ended the process. */
  code: number | null;
  /** Signal name such as "SIGTERM" when a signal ended the process. */
  signal: string | null;
  /** Set when the runtime lost its hold on the process (e.g. its remote files are gone): the reason. */
  lost?: string;
  /** True when the end was observed without an exit status (a recovered process). */
  unknown?: boolean;
}

export interface ProcessHandle {
  readonly pid: number;
  /** Process group (and session) id; the leader's pid for local runtimes. */
  readonly pgid: number;
  readonly stdout: ReadableStream<Uint8Array>;
  /** Null when stderr is merged into stdout (PTY). */
  readonly stderr: ReadableStream<Uint8Array> | null;
  /** Resolves when the leader has exited (its output may still be draining). */
  readonly exited: Promise<ExitStatus>;
  /** Whether stdin can still be written. */
  readonly stdinOpen: boolean;
  write(bytes: Uint8Array | string): Promise<number>;
  closeStdin(): void;
  /** Signal the whole process group (and session). */
  signal(signal: NodeJS.Signals): void;
  /** Whether any process of the group/session is still alive (zombies excluded). */
  groupAlive(): Promise<boolean>;
  /**
   * Resolves true once nothing of the task is alive by the kernel's word (its cgroup is
   * empty), false after `ms`; absent where that cannot be told without a scan. `hint`: an
   * event after which it is likely gone (its output closed), to look at once then.
   */
  whenGone?(ms: number, hint?: Promise<unknown>): Promise<boolean>;
  /** The pids of the task's live processes (what its leader left running, once it has exited); absent where they cannot be listed. */
  members?(): number[];
  /** The leader's pid as commands in its sandbox see it (its pid namespace), when that differs from `pid`. */
  readonly sandboxPid?: number | null;
  /** A runtime's remark about a running process (e.g. its connection is being re-established). */
  readonly note?: string | null;
  /** What the runtime needs to re-attach to this process after a restart (remote background tasks). */
  readonly resumeToken?: string;
  /** Whether the process sits reading its stdin: true, false, or null when it can't be told. */
  blockedOnInput?(): boolean | null;
  /** Release OS resources (fds, terminals) once the output has been drained or abandoned. */
  dispose(): void;
}

export interface Runtime {
  /** Throws when the process cannot start (the tool reports IO_ERROR with the message). */
  spawn(spec: SpawnSpec): Promise<ProcessHandle>;
  /**
   * Re-attaches to a process this runtime started before a restart, from its `resumeToken`,
   * continuing its output after the bytes already kept (remote background tasks).
   */
  resume?(token: string, pgid: number, offsets: { stdout: number; stderr: number }): ProcessHandle;
  /** Whether something accepts TCP connections on `port` where this runtime's processes run. */
  portOpen(port: number): Promise<boolean>;
}
