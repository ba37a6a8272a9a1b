import { lastLineOf } from "../output/tail.ts";
import type { Task } from "../tasks/task.ts";

const TICK_MS = 1000;

/** Reports a running foreground task about once a second: bytes of output so far and its last line. */
export function startProgress(task: Task, report: (bytes: number, lastLine: string) => void): () => void {
  const timer = setInterval(() => {
    // A tty's stdout is its rendered text, whose last rows are still on screen.
    const stdout = task.terminal?.text ?? task.stdout;
    const bytes = stdout.total + task.stderr.total;
    report(bytes, lastLineOf(stdout.total > 0 ? stdout : task.stderr));
  }, TICK_MS);
  return () => clearInterval(timer);
}
