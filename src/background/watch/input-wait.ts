import { detectPrompt } from "../terminal/prompt-detect.ts";
import { lastLineOf } from "../output/tail.ts";
import type { Task } from "../tasks/task.ts";

/** How long a task with open stdin must be silent before its last line counts as a prompt. */
export const SILENCE_MS = 2000;
const POLL_MS = 250;

/**
 * The prompt a running task is waiting at: its stdin is open (a tty, or keep_stdin_open),
 * it has printed nothing for SILENCE_MS, and its last line looks like a prompt.
 */
export function waitingPrompt(task: Task, now = performance.now()): string | null {
  if (!task.running) return null;
  const stdinOpen = task.info.tty || (task.keepStdinOpen && task.stdinOpen);
  if (!stdinOpen || now - task.lastOutputAtMs < SILENCE_MS) return null;
  if (task.blockedOnInput() === false) return null;
  if (task.terminal) return detectPrompt(task.terminal.cursorLine());
  // `read -p` and many tools prompt on stderr.
  return detectPrompt(lastLineOf(task.stdout)) ?? detectPrompt(lastLineOf(task.stderr));
}

/** Calls `fire` once the task waits for input; returns the unsubscribe. */
export function onWaitingForInput(task: Task, fire: () => void): () => void {
  // Silence is measured, not signalled: check it a few times a second.
  const timer = setInterval(() => {
    if (waitingPrompt(task) !== null) fire();
    if (!task.running) clearInterval(timer);
  }, POLL_MS);
  return () => clearInterval(timer);
}
