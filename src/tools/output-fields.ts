import { renderRange } from "../background/output/truncate.ts";
import type { OutputStream } from "../background/output/stream.ts";
import type { Task } from "../background/tasks/task.ts";
import { stdoutText } from "./tty-fields.ts";

/**
 * `stdout`/`stderr` of a finished foreground call: head + tail beyond `maxBytes`, with
 * `<stream>_truncated` and, where the full text was spooled, `<stream>_path`.
 */
export function foregroundOutput(task: Task, maxBytes: number): Record<string, unknown> {
  return { ...streamField(stdoutText(task), maxBytes), ...streamField(task.stderr, maxBytes) };
}

export function streamField(stream: Pick<OutputStream, "name" | "total" | "read" | "path" | "spool">, maxBytes: number): Record<string, unknown> {
  const view = renderRange(stream, 0, stream.total, maxBytes);
  const fields: Record<string, unknown> = { [stream.name]: view.text };
  if (view.truncated) {
    fields[`${stream.name}_truncated`] = true;
    if (stream.path) fields[`${stream.name}_path`] = stream.path;
  }
  if (stream.spool?.error) fields.spool_error = stream.spool.error;
  return fields;
}

/** `exit_code`, plus `signal` when a signal ended the task. */
export function exitFields(task: Task): Record<string, unknown> {
  if (!task.exit) return {};
  return task.exit.signal ? { exit_code: -1, signal: task.exit.signal } : { exit_code: task.exitCode };
}
