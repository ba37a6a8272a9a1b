import { lastLineOf } from "../output/tail.ts";
import type { Task } from "../tasks/task.ts";

const TICK_MS = 1000;

/**
 * Reports a running foreground task (or tasks being waited for) about once a second:
 * milliseconds since the report started (MCP requires progress to increase with every
 * notice; elapsed time always does, output bytes may not) and the last output line of the
 * first task still running as the message.
 */
export function startProgress(tasks: Task | readonly Task[], report: (elapsedMs: number, lastLine: string) => void): () => void {
  const all = Array.isArray(tasks) ? tasks : [tasks as Task];
  const started = performance.now();
  let last = 0;
  const timer = setInterval(() => {
    const elapsed = Math.round(performance.now() - started);
    if (elapsed <= last) return; // never the same value twice
    last = elapsed;
    const task = all.find((t) => t.running) ?? all[0]!;
    // A tty's stdout is its rendered text, whose last rows are still on screen.
    const stdout = task.terminal?.text ?? task.stdout;
    report(elapsed, lastLineOf(stdout.total > 0 ? stdout : task.stderr));
  }, TICK_MS);
  return () => clearInterval(timer);
}
