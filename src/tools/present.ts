import { type OutputStream, renderRange, renderView, type ViewOptions } from "../background/output/index.ts";
import type { Task } from "../background/tasks/index.ts";
import type { TerminalText } from "../background/terminal/index.ts";
import { waitingPrompt } from "../background/watch/index.ts";
import type { ToolResult } from "../errors.ts";
import { sandboxFields } from "./sandbox/fields.ts";

/**
 * The one result presenter: how a task, its streams and its exit appear in results.
 * Stream fields (`stdout`, `<stream>_truncated`, `<stream>_path`, `spool_error`) are named
 * here, and read cursors move here only.
 */

/** A stream as results read it: an output stream, or a tty task's rendered text. */
type Readable = OutputStream | TerminalText;

/** The stdout results show: a tty task's rendered plain text, else the stream itself. */
export function stdoutText(task: Task): Readable {
  return task.terminal?.text ?? task.stdout;
}

/** Fields that identify a task in every result: parity `task_type`, plus `kind`. */
export function identity(task: Task): { task_id: string; task_type: "background"; kind: Task["info"]["kind"] } {
  return { task_id: task.id!, task_type: "background", kind: task.info.kind };
}

/** `exit_code`, plus `signal` when a signal ended the task. */
export function exitFields(task: Task): Record<string, unknown> {
  if (!task.exit) return {};
  return task.exit.signal ? { exit_code: -1, signal: task.exit.signal } : { exit_code: task.exitCode };
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

function spoolError(task: Task): string | null {
  return task.stdout.spool?.error ?? task.stderr.spool?.error ?? null;
}

/**
 * `stdout`/`stderr` of a whole run: head + tail beyond `maxBytes`, with
 * `<stream>_truncated` and, where the full text was spooled, `<stream>_path`.
 * `markRead` moves the read cursors past what was shown (a run handed to the background).
 */
export function runOutput(task: Task, maxBytes: number, opts: { markRead?: boolean } = {}): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const stream of [stdoutText(task), task.stderr]) {
    const total = stream.total;
    const view = renderRange(stream, 0, total, maxBytes);
    fields[stream.name] = view.text;
    if (view.truncated) {
      fields[`${stream.name}_truncated`] = true;
      if (stream.path) fields[`${stream.name}_path`] = stream.path;
    }
    if (stream.spool?.error) fields.spool_error = stream.spool.error;
    if (opts.markRead) stream.cursor = total;
  }
  return fields;
}

export interface ReadOptions {
  maxBytes: number;
  /** Start at the read cursor instead of the beginning. */
  onlyNew?: boolean;
  /** A range read of one stream (does not move the cursor). */
  range?: { stream: "stdout" | "stderr"; offset: number; length?: number };
  filter?: RegExp;
  tailLines?: number;
}

/** task_output's view of a task; a read without `range` moves both cursors to the end. */
export function taskOutput(task: Task, opts: ReadOptions): ToolResult {
  const result: ToolResult = { ...identity(task), status: task.status, ...(task.info.host !== undefined ? { host: task.info.host } : {}) };
  const stdout = stdoutText(task);
  const shape = (stream: Readable, start: number, end: number): void => {
    const view = renderView(stream, { start, end, maxBytes: opts.maxBytes, filter: opts.filter, tailLines: opts.tailLines } satisfies ViewOptions);
    // Parity: stdout always present, stderr only when it has something to show (or was asked for).
    if (stream.name === "stdout" || view.text !== "" || opts.range) result[stream.name] = view.text;
    if (view.truncated) result[`${stream.name}_truncated`] = true;
  };
  if (opts.range) {
    const stream = opts.range.stream === "stderr" ? task.stderr : stdout;
    const end = Math.min(stream.total, opts.range.offset + (opts.range.length ?? opts.maxBytes));
    shape(stream, Math.min(opts.range.offset, end), end);
  } else {
    for (const stream of [stdout, task.stderr]) {
      const total = stream.total;
      shape(stream, opts.onlyNew ? stream.cursor : 0, total);
      stream.cursor = total;
    }
  }
  Object.assign(result, exitFields(task));
  if (task.lostReason) result.lost_reason = task.lostReason;
  if (task.note) result.note = task.note;
  result.stdout_total_bytes = stdout.total;
  result.stderr_total_bytes = task.stderr.total;
  result.duration_ms = task.durationMs;
  for (const stream of [task.stdout, task.stderr]) if (stream.path) result[`${stream.name}_path`] = stream.path;
  const spool = spoolError(task);
  if (spool) result.spool_error = spool;
  return Object.assign(result, interactiveFields(task), sandboxFields(task));
}

/** write_stdin's answer: the output after the read cursor (what the input provoked); the cursors move to the end. */
export function stdinAnswer(task: Task, bytesWritten: number, maxBytes: number): ToolResult {
  const result: ToolResult = { task_id: task.id, bytes_written: bytesWritten, status: task.status };
  const stdout = stdoutText(task);
  for (const stream of [stdout, task.stderr]) {
    const total = stream.total;
    const view = renderRange(stream, Math.min(stream.cursor, total), total, maxBytes);
    const field = stream === stdout ? "output" : "stderr";
    if (field === "output" || view.text !== "") result[field] = view.text;
    if (view.truncated) result[`${field}_truncated`] = true;
    stream.cursor = total;
  }
  return Object.assign(result, exitFields(task), interactiveFields(task));
}

/** One task of task_list. */
export function listEntry(task: Task): ToolResult {
  const { info } = task;
  const spool = spoolError(task);
  return {
    ...identity(task),
    status: task.status,
    ...(info.command !== undefined ? { command: info.command } : {}),
    ...(info.prompt !== undefined ? { prompt: info.prompt } : {}),
    ...(info.description !== undefined ? { description: info.description } : {}),
    ...(info.name !== undefined ? { name: info.name } : {}),
    pid: task.pid ?? null,
    ...(info.host !== undefined ? { host: info.host } : {}),
    tty: info.tty,
    started_at: task.startedAt.toISOString(),
    ...(task.endedAt ? { ended_at: task.endedAt.toISOString() } : {}),
    ...exitFields(task),
    ...(task.lostReason ? { lost_reason: task.lostReason } : {}),
    restarts: task.restarts,
    ...(task.restartPolicy ? { restart_on: task.restartPolicy.on } : {}),
    ...(task.cancelPendingRestart ? { restart_pending: true } : {}),
    ...(task.note ? { note: task.note } : {}),
    ...(spool ? { spool_error: spool } : {}),
    ...sandboxFields(task),
  };
}

/** The notice sent when a background task ends (MCP `task_finished`). */
export function taskEndEvent(task: Task): Record<string, unknown> {
  return {
    event: "task_finished",
    task_id: task.id,
    status: task.status,
    exit_code: task.exitCode ?? null,
    ...(task.exit?.signal ? { signal: task.exit.signal } : {}),
    duration_ms: task.durationMs,
  };
}
