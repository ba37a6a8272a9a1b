import { boundaryBefore, type OutputStream, shapeOutput, startOfLastLines, type ShapeRequest } from "../../background/output/index.ts";
import type { Task } from "../../background/tasks/index.ts";
import type { TerminalText } from "../../background/terminal/index.ts";
import { waitingPrompt } from "../../background/watch/index.ts";
import type { ToolResult } from "../../errors.ts";
import type { ExitStatus } from "../../runtime/types.ts";
import { decode } from "../../background/output/decode.ts";
import { sandboxFields } from "../sandbox/fields.ts";

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
  return task.exit ? exitStatusFields(task.exit) : {};
}

/** `exit_code` (-1 when a signal ended the process), plus `signal`. */
export function exitStatusFields(exit: ExitStatus): { exit_code: number; signal?: string } {
  return exit.signal ? { exit_code: -1, signal: exit.signal } : { exit_code: exit.code ?? -1 };
}

/** `pid`, and `sandbox_pid` where commands in its sandbox know the task by another pid (SPEC §25). */
export function pidFields(task: Task): { pid?: number; sandbox_pid?: number } {
  const inner = task.sandboxPid;
  return inner !== null ? { pid: task.pid, sandbox_pid: inner } : { pid: task.pid };
}

/** `screen` of a tty task, and `waiting_for_input` + `prompt` while it waits at a prompt. */
export function interactiveFields(task: Task, view: OutputView = DEFAULT_VIEW): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (task.terminal) fields.screen = screenText(task, view);
  const prompt = waitingPrompt(task);
  if (prompt !== null) {
    fields.waiting_for_input = true;
    fields.prompt = prompt;
  }
  return fields;
}

/** How a result shows output (SPEC §15): the budget for all its streams together, shaped or plain. */
export interface OutputView {
  budget: number;
  /** Plain head and tail instead of shaping (`output: "raw"`, `output_shaping = false`). */
  raw: boolean;
}

/** The view when a caller names none (the SPEC's defaults). */
export const DEFAULT_VIEW: OutputView = { budget: 8000, raw: false };

/** The view a call asks for: its own budget and mode, else the configuration's. */
export function outputView(config: { max_output_bytes: number; output_shaping: boolean }, args: { max_output_bytes?: number; max_bytes?: number; output?: "raw" | "shaped" }): OutputView {
  return {
    budget: args.max_output_bytes ?? args.max_bytes ?? config.max_output_bytes,
    raw: args.output !== undefined ? args.output === "raw" : !config.output_shaping,
  };
}

/** A tty task's screen, shaped under the same budget as its output. */
export function screenText(task: Task, view: OutputView): string {
  const screen = task.terminal!.screen();
  const bytes = new TextEncoder().encode(screen);
  if (bytes.byteLength <= view.budget) return screen;
  const source = { total: bytes.byteLength, read: (a: number, b: number) => bytes.subarray(a, b) };
  return shapeOutput([{ source, start: 0, end: bytes.byteLength }], view)[0]!.text;
}

function spoolError(task: Task): string | null {
  return task.stdout.spool?.error ?? task.stderr.spool?.error ?? null;
}

/**
 * `stdout`/`stderr` of a whole run, shaped under one budget. When anything was left out,
 * the result says how to read it: `<stream>_truncated`, both streams' total bytes and log
 * paths, and `output_task_id`, the registry task holding the full output (`keep` registers
 * a foreground task as an ended one for that). `markRead` moves the read cursors past
 * what was shown (a run handed to the background).
 */
export function runOutput(task: Task, view: OutputView, opts: { markRead?: boolean; keep?: (task: Task) => string } = {}): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const streams = [stdoutText(task), task.stderr];
  const shaped = shapeOutput(
    streams.map((s) => ({ source: s, start: 0, end: s.total })),
    view,
  );
  streams.forEach((stream, i) => {
    fields[stream.name] = shaped[i]!.text;
    if (shaped[i]!.truncated) fields[`${stream.name}_truncated`] = true;
    if (stream.spool?.error) fields.spool_error = stream.spool.error;
    if (opts.markRead) stream.cursor = stream.total;
  });
  if (shaped.some((s) => s.truncated)) {
    // The full output must stay readable: on disk, and through task_output range reads.
    if (!task.running) for (const s of [task.stdout, task.stderr]) s.spoolAll();
    const id = task.id ?? opts.keep?.(task);
    if (id) fields.output_task_id = id;
    streams.forEach((stream) => {
      if (stream.path) fields[`${stream.name}_path`] = stream.path;
      fields[`${stream.name}_total_bytes`] = stream.total;
    });
  }
  return fields;
}

export interface ReadOptions {
  view: OutputView;
  /** Start at the read cursor instead of the beginning. */
  onlyNew?: boolean;
  /** A range read of one stream (does not move the cursor): raw bytes, never shaped. */
  range?: { stream: "stdout" | "stderr"; offset: number; length?: number };
  filter?: RegExp;
  tailLines?: number;
}

/**
 * task_output's view of tasks. Their streams share one budget (a result with several tasks
 * carries them all); a range read returns raw bytes instead. A read without `range` moves
 * both cursors of each task to the end.
 */
export function taskOutputs(tasks: Task[], opts: ReadOptions): ToolResult[] {
  const results = tasks.map((task): ToolResult => ({ ...identity(task), status: task.status, ...(task.info.host !== undefined ? { host: task.info.host } : {}) }));
  if (opts.range) {
    tasks.forEach((task, i) => {
      const { offset, length } = opts.range!;
      const stream = opts.range!.stream === "stderr" ? task.stderr : stdoutText(task);
      const page = rangePage(stream, offset, length, opts.view.budget);
      results[i]![stream.name] = decode(page.bytes);
      // More was asked for than one page holds (or than the running task has written yet).
      const asked = length === undefined ? stream.total : offset + length;
      if (page.end < asked && (page.end < stream.total || task.running)) results[i]!.next_offset = page.end;
    });
  } else {
    const streams = tasks.flatMap((task) => [stdoutText(task), task.stderr]);
    const requests: ShapeRequest[] = streams.map((stream) => {
      const total = stream.total;
      let start = opts.onlyNew ? Math.min(stream.cursor, total) : 0;
      if (opts.tailLines !== undefined && !opts.filter) start = startOfLastLines(stream, start, total, opts.tailLines);
      return { source: stream, start, end: total, filter: opts.filter, tailLines: opts.filter ? opts.tailLines : undefined };
    });
    const shaped = shapeOutput(requests, opts.view);
    streams.forEach((stream, i) => {
      const result = results[i >> 1]!;
      const view = shaped[i]!;
      // Parity: stdout always present, stderr only when it has something to show.
      if (stream.name === "stdout" || view.text !== "") result[stream.name] = view.text;
      if (view.truncated) result[`${stream.name}_truncated`] = true;
      stream.cursor = requests[i]!.end;
    });
  }
  return tasks.map((task, i) => {
    const result = results[i]!;
    Object.assign(result, exitFields(task));
    if (task.lostReason) result.lost_reason = task.lostReason;
    if (task.note) result.note = task.note;
    result.stdout_total_bytes = stdoutText(task).total;
    result.stderr_total_bytes = task.stderr.total;
    result.duration_ms = task.durationMs;
    for (const stream of [task.stdout, task.stderr]) if (stream.path) result[`${stream.name}_path`] = stream.path;
    const spool = spoolError(task);
    if (spool) result.spool_error = spool;
    return Object.assign(result, interactiveFields(task, opts.view), sandboxFields(task));
  });
}

/**
 * One page of a range read (SPEC §15): raw bytes from `offset`, at most `budget` of them
 * (so that every harness shows the page whole), ending between characters when the page
 * cuts the range.
 */
function rangePage(stream: Readable, offset: number, length: number | undefined, budget: number): { bytes: Uint8Array; end: number } {
  const wanted = Math.min(stream.total, offset + (length ?? stream.total));
  const end = Math.min(wanted, offset + budget);
  const start = Math.min(offset, end);
  // One byte more, to see whether the page's end falls inside a character.
  const bytes = stream.read(start, Math.min(wanted, end + 1)) ?? new Uint8Array(0);
  const cut = end < wanted ? boundaryBefore(bytes, end - start) : end - start;
  const kept = cut > 0 ? cut : end - start;
  return { bytes: bytes.subarray(0, Math.min(kept, bytes.byteLength)), end: start + kept };
}

/** write_stdin's answer: the output after the read cursor (what the input provoked); the cursors move to the end. */
export function stdinAnswer(task: Task, bytesWritten: number, view: OutputView): ToolResult {
  const result: ToolResult = { task_id: task.id, bytes_written: bytesWritten, status: task.status };
  const stdout = stdoutText(task);
  const streams = [stdout, task.stderr];
  const ends = streams.map((s) => s.total);
  const shaped = shapeOutput(
    streams.map((s, i) => ({ source: s, start: Math.min(s.cursor, ends[i]!), end: ends[i]! })),
    view,
  );
  streams.forEach((stream, i) => {
    const field = stream === stdout ? "output" : "stderr";
    if (field === "output" || shaped[i]!.text !== "") result[field] = shaped[i]!.text;
    if (shaped[i]!.truncated) result[`${field}_truncated`] = true;
    stream.cursor = ends[i]!;
  });
  return Object.assign(result, exitFields(task), interactiveFields(task, view));
}

/**
 * One task of task_list. Built field by field (no spreads) with the start time's ISO text
 * cached: a list of hundreds of tasks is asked for often, and each entry's cost adds up.
 */
/** What a task_list entry leaves out when it is so (SPEC §18): the result says the server's sandbox once. */
export interface ListDefaults {
  sandbox: string;
  sandboxLevel?: string;
  own: Record<string, string>;
}

/** Longer commands, prompts and descriptions are cut in a list (task_output of the task has the rest of it). */
const LIST_TEXT_CHARS = 500;

export function listEntry(task: Task, defaults?: ListDefaults): ToolResult {
  const { info } = task;
  const entry: ToolResult = { task_id: task.id!, task_type: "background", kind: info.kind, status: task.status };
  if (info.command !== undefined) entry.command = listText(info.command);
  if (info.prompt !== undefined) entry.prompt = listText(info.prompt);
  if (info.description !== undefined) entry.description = listText(info.description);
  if (info.name !== undefined) entry.name = info.name;
  entry.pid = task.pid ?? null;
  const inner = task.sandboxPid;
  if (inner !== null) entry.sandbox_pid = inner;
  if (info.host !== undefined) entry.host = info.host;
  if (info.tty || !defaults) entry.tty = info.tty;
  entry.started_at = isoTime(task.startedAt);
  const ended = task.endedAt;
  if (ended) entry.ended_at = isoTime(ended);
  if (task.exit) {
    if (task.exit.signal) {
      entry.exit_code = -1;
      entry.signal = task.exit.signal;
    } else entry.exit_code = task.exitCode;
  }
  if (task.lostReason) entry.lost_reason = task.lostReason;
  if (task.restarts > 0 || !defaults) entry.restarts = task.restarts;
  if (task.restartPolicy) entry.restart_on = task.restartPolicy.on;
  if (task.cancelPendingRestart) entry.restart_pending = true;
  const note = task.note;
  if (note) entry.note = note;
  const spool = spoolError(task);
  if (spool) entry.spool_error = spool;
  const sandbox = sandboxFields(task);
  if (defaults && sandbox.sandbox === defaults.sandbox && sandbox.sandbox_level === defaults.sandboxLevel) {
    delete sandbox.sandbox;
    delete sandbox.sandbox_level;
  }
  return Object.assign(entry, sandbox);
}

function listText(text: string): string {
  return text.length <= LIST_TEXT_CHARS ? text : `${text.slice(0, LIST_TEXT_CHARS)}… (${text.length} characters)`;
}

/** ISO-8601 text of a task's times, once per Date (a restart makes a new one). */
const isoTexts = new WeakMap<Date, string>();
function isoTime(date: Date): string {
  let text = isoTexts.get(date);
  if (text === undefined) isoTexts.set(date, (text = date.toISOString()));
  return text;
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
