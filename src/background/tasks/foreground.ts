import type { Task } from "./task.ts";

export type ForegroundOutcome = "exited" | "timeout" | "aborted" | "backgrounded";

export interface ForegroundOptions {
  timeoutMs: number;
  signal: AbortSignal;
  /** Stop waiting (and leave the task running) after this long. */
  backgroundAfterMs?: number;
  /** Stop waiting (and leave the task running) when this settles (e.g. it waits for input). */
  backgroundWhen?: Promise<unknown>;
}

/**
 * Awaits a foreground task. It never outlives its call: a timeout or an abort (MCP
 * cancellation, the caller going away, shutdown) terminates its whole process group.
 * Only `backgroundAfterMs` leaves it running, for the caller to adopt.
 */
export async function awaitForeground(task: Task, opts: ForegroundOptions): Promise<ForegroundOutcome> {
  const timers: Array<ReturnType<typeof setTimeout>> = [];
  let onAbort: (() => void) | undefined;
  const outcome = await new Promise<ForegroundOutcome>((resolve) => {
    task.ended.then(() => resolve("exited"));
    timers.push(setTimeout(() => resolve("timeout"), opts.timeoutMs));
    if (opts.backgroundAfterMs !== undefined) {
      timers.push(setTimeout(() => resolve("backgrounded"), opts.backgroundAfterMs));
    }
    opts.backgroundWhen?.then(() => resolve("backgrounded"));
    if (opts.signal.aborted) resolve("aborted");
    onAbort = () => resolve("aborted");
    opts.signal.addEventListener("abort", onAbort, { once: true });
  });
  for (const t of timers) clearTimeout(t);
  if (onAbort) opts.signal.removeEventListener("abort", onAbort);
  if (outcome === "timeout" || outcome === "aborted") {
    if (task.running) {
      await task.kill();
      await task.ended;
    }
    // It may have exited by itself in the same instant: then it did not time out.
    if (task.status === "completed") return "exited";
  }
  return outcome;
}
