import { detectPrompt, lastLine } from "../terminal/prompt-detect.ts";
import type { OutputStream } from "../output/stream.ts";
import type { Task } from "../tasks/task.ts";

/** How long a task with open stdin must be silent before its last line counts as a prompt. */
export const SILENCE_MS = 2000;
const TAIL_BYTES = 4096;
const POLL_MS = 250;

/**
 * The prompt a running task is waiting at: its stdin is open (a tty, or keep_stdin_open),
 * it has printed nothing for SILENCE_MS, and its last line looks like a prompt.
 */
export function waitingPrompt(task: Task, now = performance.now()): string | null {
  if (!task.running || !task.handle) return null;
  const stdinOpen = task.tty || (task.keepStdinOpen && task.handle.stdinOpen);
  if (!stdinOpen || now - task.lastOutputAtMs < SILENCE_MS) return null;
  if (task.handle.blockedOnInput?.() === false) return null;
  if (task.terminal) return detectPrompt(task.terminal.cursorLine());
  // `read -p` and many tools prompt on stderr.
  return detectPrompt(tailLine(task.stdout)) ?? detectPrompt(tailLine(task.stderr));
}

/** Resolves with the prompt once the task waits for input; never, if it ends first. */
export function whenWaitingForInput(task: Task): { promise: Promise<string>; cancel(): void } {
  let timer: ReturnType<typeof setInterval> | undefined;
  const promise = new Promise<string>((resolve) => {
    // Silence is measured, not signalled: check it a few times a second.
    timer = setInterval(() => {
      const prompt = waitingPrompt(task);
      if (prompt !== null) resolve(prompt);
      if (prompt !== null || !task.running) clearInterval(timer);
    }, POLL_MS);
  });
  return { promise, cancel: () => clearInterval(timer) };
}

function tailLine(stream: OutputStream): string {
  const bytes = stream.read(Math.max(0, stream.total - TAIL_BYTES), stream.total);
  return bytes ? lastLine(new TextDecoder().decode(bytes)) : "";
}
