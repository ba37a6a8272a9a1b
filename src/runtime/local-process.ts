import { blockedOnInput } from "./input-blocked.ts";
import { pinCwd } from "./pinned-cwd.ts";
import { groupAlive, signalGroup } from "./process-group.ts";
import type { ExitStatus, SpawnSpec } from "./types.ts";
import { watchdog } from "./watchdog.ts";
import { sandboxedExit } from "../sandbox/exit-status.ts";

/** Children started inside a sandbox: their exit status comes through bwrap (128+N for signal N). */
const sandboxed = new WeakSet<Bun.Subprocess>();

/** Where the child's stdio goes: pipe fds, or a pseudo-terminal (Bun's `terminal` option). */
interface StdioOptions {
  stdin?: number | "ignore";
  stdout?: number;
  stderr?: number;
  terminal?: object;
}

/**
 * Starts a local child the one way every local runtime does: `bash -c` (or the argv),
 * its own session (`detached`), in the validated working directory held open, and
 * registered with the watchdog before anything else can happen.
 */
export function spawnChild(spec: SpawnSpec, stdio: StdioOptions): Bun.Subprocess {
  const cwd = pinCwd(spec.cwd);
  let proc: Bun.Subprocess;
  try {
    const argv = spec.argv ?? ["bash", "-c", spec.command];
    if (spec.sandbox) {
      // bwrap gets the pinned directory as fd 3 and checks the command really starts there.
      const pin = cwd.fd !== null ? { fd: 3, shell: spec.argv === undefined } : undefined;
      const wrapped = spec.sandbox.wrap(argv, spec.cwd, spec.env, pin);
      const { stdin, stdout, stderr, ...rest } = stdio;
      const fds = pin ? { ...rest, stdio: [stdin ?? (stdio.terminal ? null : "ignore"), stdout ?? null, stderr ?? null, cwd.fd] } : stdio;
      proc = Bun.spawn(wrapped.argv, { ...fds, cwd: cwd.path, env: wrapped.env, detached: true } as never);
    } else {
      proc = Bun.spawn(argv, { ...stdio, cwd: cwd.path, env: spec.env, detached: true } as never);
    }
    if (spec.sandbox) sandboxed.add(proc);
  } finally {
    cwd.release();
  }
  watchdog().track(proc.pid);
  return proc;
}

/**
 * What every local child has in common, piped or on a terminal: it leads its own session
 * and process group (pgid = pid), is signalled as a group, and is watched through /proc.
 */
export abstract class LocalProcess {
  readonly pid: number;
  readonly pgid: number;
  readonly exited: Promise<ExitStatus>;
  private leaderExited = false;

  constructor(proc: Bun.Subprocess) {
    this.pid = proc.pid;
    this.pgid = proc.pid;
    this.exited = proc.exited.then(() => {
      this.leaderExited = true;
      const status = { code: proc.signalCode ? null : proc.exitCode, signal: (proc.signalCode as string | null) ?? null };
      return sandboxed.has(proc) ? sandboxedExit(status.code, status.signal) : status;
    });
  }

  signal(signal: NodeJS.Signals): void {
    signalGroup(this.pgid, signal);
  }

  async groupAlive(): Promise<boolean> {
    // While the leader runs the group is alive: no need to scan /proc.
    return !this.leaderExited || groupAlive(this.pgid);
  }

  blockedOnInput(): boolean | null {
    return blockedOnInput(this.pgid);
  }
}
