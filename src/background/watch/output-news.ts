import { firstOf } from "../../first-of.ts";
import type { Task } from "../tasks/task.ts";

export interface OutputNews {
  running: boolean;
  stdoutTotal: number;
  stderrTotal: number;
}

/**
 * Resolves when a task has news for a follower: output beyond the given offsets, its end,
 * or the timeout (whichever comes first), with where its streams stand then.
 */
export async function awaitOutputNews(
  task: Task,
  offsets: { stdout: number; stderr: number },
  timeoutMs: number,
  signal: AbortSignal,
): Promise<OutputNews> {
  const hasNews = () => !task.running || task.stdout.total > offsets.stdout || task.stderr.total > offsets.stderr;
  if (!hasNews()) {
    await firstOf({
      promises: { ended: task.ended },
      listeners: [task.stdout, task.stderr].map((stream) => (settle: (o: "data") => void) => stream.onData(() => settle("data"))),
      timeoutMs,
      signal,
    });
  }
  return { running: task.running, stdoutTotal: task.stdout.total, stderrTotal: task.stderr.total };
}
