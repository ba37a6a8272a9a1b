import { blockedOnInput } from "./input-blocked.ts";
import { groupAlive, signalGroup } from "./process-group.ts";
import type { ExitStatus } from "./types.ts";

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
      return { code: proc.signalCode ? null : proc.exitCode, signal: (proc.signalCode as string | null) ?? null };
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
