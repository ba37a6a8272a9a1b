import { waitingPrompt } from "../background/watch/input-wait.ts";
import type { OutputStream } from "../background/output/stream.ts";
import type { Task } from "../background/tasks/task.ts";
import type { TerminalText } from "../background/terminal/text.ts";

/** The stdout results show: a tty task's rendered plain text, else the stream itself. */
export function stdoutText(task: Task): TerminalText | OutputStream {
  return task.terminal?.text ?? task.stdout;
}

/** `screen` of a tty task, and `waiting_for_input` + `prompt` while it waits at a prompt. */
export function interactiveFields(task: Task): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (task.terminal) fields.screen = task.terminal.screen();
  const prompt = waitingPrompt(task);
  if (prompt !== null) {
    fields.waiting_for_input = true;
    fields.prompt = prompt;
  }
  return fields;
}
