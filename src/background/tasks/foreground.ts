import { firstOf } from "../../first-of.ts";
import { describeProcesses, type ProcessList } from "../../runtime/local/process-info.ts";
import type { Launcher, LaunchRequest } from "./launcher.ts";
import type { Task } from "./task.ts";

/**
 * How a foreground run ended: by itself, by its time limit, by cancellation, handed to the
 * background, or by itself with processes it started still running (kept as a background task).
 */
export type ForegroundOutcome = "exited" | "timeout" | "cancelled" | "backgrounded" | "left_running";

/** What becomes of processes a command leaves running when it exits (config `foreground_leftovers`). */
export type LeftoversPolicy = "adopt" | "kill";

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
  /** Processes the command leaves running: kept as a background task (`adopt`), or ended (`kill`, the default). */
  leftovers?: LeftoversPolicy;
}

export interface ForegroundRun {
  outcome: ForegroundOutcome;
  task: Task;
  /** What the command left running: kept in `task` (outcome `left_running`), or ended. */
  leftovers?: ProcessList;
}

/**
 * The one foreground lifecycle, for every tool and face: launch, await, and then either
 * the task has ended, or it is adopted into the background as is (also when the command
 * exits leaving processes running, with `leftovers: "adopt"`), or — on a timeout or a
 * cancellation — everything of it is terminated before this returns. A foreground task
 * never outlives its call unless it was adopted.
 */
export async function runForeground(
  launcher: Launcher,
  request: Omit<LaunchRequest, "background">,
  opts: ForegroundOptions,
): Promise<ForegroundRun> {
  const task = await launcher.launch({ ...request, background: false });
  const stop = opts.onStart?.(task);
  const listeners: Array<(settle: (outcome: "backgrounded" | "left_running") => void) => () => void> = [];
  const { backgroundAfterMs, backgroundWhen } = opts;
  if (backgroundAfterMs !== undefined) {
    listeners.push((settle) => {
      const timer = setTimeout(() => settle("backgrounded"), backgroundAfterMs);
      return () => clearTimeout(timer);
    });
  }
  if (backgroundWhen) listeners.push((settle) => backgroundWhen(task, () => settle("backgrounded")));
  let leftovers: ProcessList | undefined;
  // Only while the call waits: a timeout or a cancellation ends everything (kill-on-drop).
  listeners.push((settle) => {
    let waiting = true;
    task.onLeftovers = async (pids) => {
      const found = await describeProcesses(pids);
      // Timed out or cancelled meanwhile: everything ends.
      if (!waiting || found.pids.length === 0) return false;
      leftovers = found;
      if (opts.leftovers !== "adopt") return false;
      settle("left_running");
      return true;
    };
    return () => {
      waiting = false;
      task.onLeftovers = null;
    };
  });
  let outcome: ForegroundOutcome;
  try {
    const first = await firstOf({ promises: { exited: task.ended }, listeners, timeoutMs: opts.timeoutMs, signal: opts.signal });
    outcome = first === "aborted" ? "cancelled" : first;
  } finally {
    stop?.();
  }
  if (outcome === "backgrounded" || outcome === "left_running") {
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
  return { outcome, task, ...(leftovers ? { leftovers } : {}) };
}
