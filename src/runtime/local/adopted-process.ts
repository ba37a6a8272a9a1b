import type { ExitStatus, ProcessHandle } from "../types.ts";
import { groupAlive, signalGroup } from "../process-groups/process-group.ts";

const POLL_MS = 250;

/**
 * A process group left running by a registry that died, recovered from its meta.json.
 * We are not its parent: no output pipes (its output after the crash is lost), no exit
 * code, and its end is noticed by polling /proc, the only way without being the parent.
 */
export class AdoptedProcess implements ProcessHandle {
  readonly stdinOpen = false;
  readonly stdout = new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  readonly stderr = new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  readonly exited: Promise<ExitStatus>;

  constructor(
    readonly pid: number,
    readonly pgid: number,
  ) {
    this.exited = new Promise((resolve) => {
      const timer = setInterval(() => {
        if (!groupAlive(this.pgid)) {
          clearInterval(timer);
          resolve({ code: null, signal: null, unknown: true });
        }
      }, POLL_MS);
      timer.unref?.();
    });
  }

  async write(): Promise<number> {
    throw new Error("stdin of a recovered task is not available");
  }
  closeStdin(): void {}
  signal(signal: NodeJS.Signals): void {
    signalGroup(this.pgid, signal);
  }
  async groupAlive(): Promise<boolean> {
    return groupAlive(this.pgid);
  }
  dispose(): void {}
}
