import type { Task } from "./task.ts";

/** When a task that exited on its own is started again (`restart_on`, `--restart-on`). */
export interface RestartPolicy {
  on: "failure" | "always";
  /** At most this many automatic restarts (unlimited when absent). */
  maxRestarts?: number;
  /** Delay before the first restart; doubled after each quick failure, up to MAX_DELAY_MS. */
  delayMs: number;
}

export const MAX_DELAY_MS = 30_000;
/** A run shorter than this counts as a quick failure: the next delay doubles. */
const QUICK_RUN_MS = 10_000;

/**
 * Follows a task's runs: when one ends on its own (not killed by the user, not lost) and
 * the policy says so, `relaunch` starts it again in place after the delay. The delay
 * doubles on quick successive failures (a crash loop backs off up to 30 s) and goes back
 * to the base once a run lasted a while.
 */
export function applyRestartPolicy(task: Task, policy: RestartPolicy, relaunch: (task: Task) => Promise<boolean>): void {
  let automatic = 0;
  let delay = policy.delayMs;
  const onEnd = (t: Task) => {
    if (t.status !== "completed") return; // killed by the user, or lost: never restarted
    const failed = t.exitCode !== 0;
    if (policy.on === "failure" && !failed) return;
    if (policy.maxRestarts !== undefined && automatic >= policy.maxRestarts) return;
    const quick = t.durationMs < QUICK_RUN_MS;
    const wait = quick ? delay : policy.delayMs;
    delay = quick ? Math.min(MAX_DELAY_MS, Math.max(1, delay) * 2) : policy.delayMs;
    const timer = setTimeout(() => {
      t.cancelPendingRestart = null;
      automatic++;
      relaunch(t).catch(() => {}); // cannot start again (e.g. its directory is gone): it stays ended
    }, wait);
    t.cancelPendingRestart = () => {
      clearTimeout(timer);
      t.cancelPendingRestart = null;
    };
  };
  // End listeners stay for every run of the task, so this follows all its restarts.
  task.onEnd(onEnd);
}
