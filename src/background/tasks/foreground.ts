import { firstOf } from "../../first-of.ts";
import type { Launcher, LaunchRequest } from "./launcher.ts";
import type { Task } from "./task.ts";

/** How a foreground run ended: by itself, by its time limit, by cancellation, or handed to the background. */
export type ForegroundOutcome = "exited" | "timeout" | "cancelled" | "backgrounded";

export interface ForegroundOptions {
  timeoutMs: number;
  /** Aborted when the caller goes away (MCP cancellation, shutdown). */
  signal: AbortSignal;
  /** Stop waiting (and keep the task running in the background) after this long. */
  backgroundAfterMs?: number;
  /** Subscribes `fire` to an event that hands the task to the background (e.g. it waits at a prompt); returns the unsubscribe. */
  backgroundWhen?: (task: Task, fire: () => void) => () => void;
  /** Told about the task once it runs; may return what to stop when the wait ends (progress reports). */
  onStart?: (task: Task) => (() => void) | void;
}

/**
 * The one foreground lifecycle, for every tool and face: launch, await, and then either
 * the task has ended, or it is adopted into the background as is, or — on a timeout or a
 * cancellation — its whole process group is terminated before this returns. A foreground
 * task never outlives its call unless it was adopted.
 */
export async function runForeground(
  launcher: Launcher,
  request: Omit<LaunchRequest, "background">,
  opts: ForegroundOptions,
): Promise<{ outcome: ForegroundOutcome; task: Task }> {
  const task = await launcher.launch({ ...request, background: false });
  const stop = opts.onStart?.(task);
  const listeners: Array<(settle: (outcome: "backgrounded") => void) => () => void> = [];
  const { backgroundAfterMs, backgroundWhen } = opts;
  if (backgroundAfterMs !== undefined) {
    listeners.push((settle) => {
      const timer = setTimeout(() => settle("backgrounded"), backgroundAfterMs);
      return () => clearTimeout(timer);
    });
  }
  if (backgroundWhen) listeners.push((settle) => backgroundWhen(task, () => settle("backgrounded")));
  let outcome: ForegroundOutcome;
  try {
    const first = await firstOf({ promises: { exited: task.ended }, listeners, timeoutMs: opts.timeoutMs, signal: opts.signal });
    outcome = first === "aborted" ? "cancelled" : first;
  } finally {
    stop?.();
  }
  if (outcome === "backgrounded") {
    // Adopted as is: same process, same output streams, nothing restarted or lost (once: a
    // call run as an MCP task is adopted at its start).
    if (task.id === null) launcher.adopt(task);
  } else if (outcome === "timeout" || outcome === "cancelled") {
    if (task.running) {
      await task.kill();
      await task.ended;
    }
    // It may have exited by itself in the same instant: then it did not time out.
    if (task.status === "completed") outcome = "exited";
  }
  return { outcome, task };
}
