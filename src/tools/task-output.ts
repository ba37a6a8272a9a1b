import { z } from "zod";
import { renderView } from "../background/output/truncate.ts";
import type { OutputStream } from "../background/output/stream.ts";
import { Task } from "../background/tasks/task.ts";
import { errorResult, type ToolResult } from "./errors.ts";
import { exitFields } from "./output-fields.ts";
import { findTask, identity } from "./task-fields.ts";
import { interactiveFields, stdoutText } from "./tty-fields.ts";
import { compileUserRegex } from "../safety/regex-guard.ts";
import { sandboxFields } from "./sandbox-fields.ts";
import { defineTool } from "./types.ts";

const MAX_BYTES_LIMIT = 1_000_000;

const schema = z
  .object({
    task_id: z.string().min(1).optional().describe("The task to read (e.g. 'bg-1'). Give this or task_ids."),
    task_ids: z.array(z.string().min(1)).min(1).optional().describe("Several tasks to read (and wait for, with `until`)."),
    until: z
      .enum(["any", "all"])
      .optional()
      .describe("With task_ids and wait: return when any one or when all of them have finished. (default: 'all')"),
    wait: z.boolean().optional().describe("If true, block until the task ends or `timeout` passes. (default: false)"),
    timeout: z.number().int().min(0).optional().describe("Maximum seconds to wait when wait=true. (default: 30)"),
    only_new: z.boolean().optional().describe("Return only output produced since the previous read of this task. (default: false)"),
    offset: z.number().int().min(0).optional().describe("Byte offset of a range read of the full (spooled) output; does not move the read cursor."),
    length: z.number().int().min(0).optional().describe("Bytes to read from `offset`. (default: max_bytes)"),
    stream: z.enum(["stdout", "stderr"]).optional().describe("Stream for a range read. (default: 'stdout')"),
    tail_lines: z.number().int().min(0).optional().describe("Return only the last N lines of each stream."),
    filter: z.string().optional().describe("Regular expression: return only the lines that match it."),
    max_bytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_BYTES_LIMIT)
      .optional()
      .describe(`Per-stream limit; longer output keeps its head and tail around a truncation line. (default: 50000, at most ${MAX_BYTES_LIMIT})`),
  })
  .strict()
  .superRefine((v, issue) => {
    if ((v.task_id === undefined) === (v.task_ids === undefined)) {
      issue.addIssue({ code: "custom", path: ["task_id"], message: "give exactly one of task_id (a string) or task_ids (an array)" });
    }
    if (v.until !== undefined && v.task_ids === undefined) {
      issue.addIssue({ code: "custom", path: ["until"], message: "until applies only with task_ids" });
    }
    if (v.length !== undefined && v.offset === undefined) {
      issue.addIssue({ code: "custom", path: ["length"], message: "length needs offset" });
    }
    if (v.stream !== undefined && v.offset === undefined) {
      issue.addIssue({ code: "custom", path: ["stream"], message: "stream selects the stream of a range read: it needs offset" });
    }
    if (v.offset !== undefined && v.only_new) {
      issue.addIssue({ code: "custom", path: ["only_new"], message: "only_new and offset cannot be combined" });
    }
  });

type Args = z.infer<typeof schema>;

export const taskOutputTool = defineTool({
  name: "task_output",
  description:
    "Get the output and status of a background task, optionally waiting for it to end (the wait returns as soon as the task exits). " +
    "Status is 'running', 'completed' (ended on its own, whatever its exit code), 'killed' or 'lost'. Each call moves the task's read cursor " +
    "to the end of its output, so only_new returns what arrived since the last read. offset/length read any byte range of the full output " +
    "from the log file. Returns: {task_id, task_type, kind, status, host?, stdout, stderr?, exit_code?, signal?, lost_reason?, note?, stdout_total_bytes, sandbox?, sandbox_level?, sandbox_denied?, " +
    "stderr_total_bytes, duration_ms, stdout_truncated?, stderr_truncated?, stdout_path?, stderr_path?, spool_error?, screen?, waiting_for_input?, " +
    "prompt?}; with task_ids: " +
    "{results: [...], finished: [task_id...]}",
  schema,
  async run(args, ctx) {
    let filter: RegExp | undefined;
    if (args.filter !== undefined) {
      const compiled = compileUserRegex(args.filter);
      if (typeof compiled === "string") {
        return errorResult("INVALID_ARGUMENT", `Invalid arguments for task_output: filter: ${compiled}`, { filter: args.filter });
      }
      filter = compiled;
    }
    const ids = args.task_ids ?? [args.task_id!];
    const tasks: Task[] = [];
    for (const id of ids) {
      const t = findTask(ctx, id);
      if (!(t instanceof Task)) return t;
      tasks.push(t);
    }
    if (args.wait) {
      const until = args.task_ids ? (args.until ?? "all") : "all";
      const ended = tasks.map((t) => t.ended);
      const finished = until === "any" ? Promise.race(ended) : Promise.all(ended);
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort: (() => void) | undefined;
      await new Promise<void>((resolve) => {
        finished.then(() => resolve());
        timer = setTimeout(resolve, (args.timeout ?? 30) * 1000);
        onAbort = () => resolve();
        ctx.signal.addEventListener("abort", onAbort, { once: true });
      });
      clearTimeout(timer);
      if (onAbort) ctx.signal.removeEventListener("abort", onAbort);
    }
    const results = tasks.map((t) => readTask(t, args, filter));
    if (!args.task_ids) return results[0]!;
    return { results, finished: tasks.filter((t) => !t.running).map((t) => t.id!) };
  },
});

function readTask(task: Task, args: Args, filter: RegExp | undefined): ToolResult {
  const maxBytes = args.max_bytes ?? 50_000;
  const result: ToolResult = { ...identity(task), status: task.status, ...(task.host !== undefined ? { host: task.host } : {}) };
  // A tty task's stdout is its rendered plain text.
  const stdout = stdoutText(task);
  if (args.offset !== undefined) {
    const stream = args.stream === "stderr" ? task.stderr : stdout;
    const end = Math.min(stream.total, args.offset + (args.length ?? maxBytes));
    const start = Math.min(args.offset, end);
    const view = renderView(stream, { start, end, maxBytes, filter, tailLines: args.tail_lines });
    result[stream.name] = view.text;
    if (view.truncated) result[`${stream.name}_truncated`] = true;
  } else {
    for (const stream of [stdout, task.stderr]) {
      const total = stream.total;
      const start = args.only_new ? stream.cursor : 0;
      const view = renderView(stream, { start, end: total, maxBytes, filter, tailLines: args.tail_lines });
      // Parity: stdout always present, stderr only when it has something to show.
      if (stream.name === "stdout" || view.text !== "") result[stream.name] = view.text;
      if (view.truncated) result[`${stream.name}_truncated`] = true;
      stream.cursor = total;
    }
  }
  Object.assign(result, exitFields(task));
  if (task.lostReason) result.lost_reason = task.lostReason;
  if (task.running && task.handle?.note) result.note = task.handle.note;
  result.stdout_total_bytes = stdout.total;
  result.stderr_total_bytes = task.stderr.total;
  result.duration_ms = task.durationMs;
  addPaths(result, task.stdout);
  addPaths(result, task.stderr);
  const spoolError = task.stdout.spool?.error ?? task.stderr.spool?.error;
  if (spoolError) result.spool_error = spoolError;
  return Object.assign(result, interactiveFields(task), sandboxFields(task));
}

function addPaths(result: ToolResult, stream: OutputStream): void {
  if (stream.path) result[`${stream.name}_path`] = stream.path;
}
