import { z } from "zod";
import { renderRange } from "../background/output/truncate.ts";
import { Task } from "../background/tasks/task.ts";
import { errorResult, type ToolResult } from "./errors.ts";
import { keyBytes, KNOWN_KEYS_HELP } from "./keys.ts";
import { exitFields } from "./output-fields.ts";
import { findTask } from "./task-fields.ts";
import { interactiveFields, stdoutText } from "./tty-fields.ts";
import { defineTool } from "./types.ts";

const MAX_YIELD_MS = 10_000;
/** Once output has started, this much quiet means the program has answered. */
const SETTLE_MS = 150;
const MAX_OUTPUT_BYTES = 50_000;

const schema = z
  .object({
    task_id: z.string().min(1).describe("The task to write to (e.g. 'bg-1'): a tty task, or a background task started with keep_stdin_open."),
    chars: z
      .string()
      .optional()
      .describe("Text to type; control characters work on a tty ('\\u0003' interrupts, '\\u0004' is EOF); '' only polls for output. (default: '')"),
    keys: z
      .array(z.string())
      .optional()
      .describe(`Named keys sent after chars, e.g. ["enter"], ["ctrl-c"], ["up", "enter"]. Known: ${KNOWN_KEYS_HELP}. (default: none)`),
    close_stdin: z.boolean().optional().describe("After writing, close stdin (EOF; on a tty, Ctrl-D). (default: false)"),
    yield_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_YIELD_MS)
      .optional()
      .describe(`How long to wait for output after writing; returns early when the task exits or its output settles. (default: 250, at most ${MAX_YIELD_MS})`),
  })
  .strict();

export const writeStdinTool = defineTool({
  name: "write_stdin",
  description:
    "Type into a running interactive task (started with bash tty: true, or run_in_background with keep_stdin_open: true) and read what it " +
    "printed in response: writes chars, then the named keys, optionally closes stdin, then waits up to yield_ms for output or exit. " +
    "The output is everything after the task's read cursor (so what the input provoked); the cursor moves to the end. chars '' just polls. " +
    "On a finished task it returns the final status. Returns: {task_id, bytes_written, status, output, stderr?, output_truncated?, screen?, " +
    "exit_code?, signal?, waiting_for_input?, prompt?}",
  schema,
  async run(args, ctx) {
    const keys = args.keys ?? [];
    const unknown = keys.find((k) => keyBytes(k, { tty: true, applicationCursor: false }) === null);
    if (unknown !== undefined) {
      return errorResult("INVALID_ARGUMENT", `Invalid arguments for write_stdin: keys: unknown key '${unknown}'. Known keys: ${KNOWN_KEYS_HELP}`, {
        key: unknown,
      });
    }
    const task = findTask(ctx, args.task_id);
    if (!(task instanceof Task)) return task;
    if (!task.tty && !task.keepStdinOpen) {
      return errorResult(
        "INVALID_ARGUMENT",
        `Task ${task.id} has no writable stdin: start it with bash tty: true, or with run_in_background: true and keep_stdin_open: true, to write to it`,
        { task_id: task.id },
      );
    }
    let written = 0;
    if (task.running && task.handle) {
      const mode = { tty: task.tty, applicationCursor: task.terminal?.applicationCursorKeys ?? false };
      const data = (args.chars ?? "") + keys.map((k) => keyBytes(k, mode)!).join("");
      if ((data !== "" || args.close_stdin) && !task.handle.stdinOpen) {
        return errorResult("INVALID_ARGUMENT", `The stdin of task ${task.id} is already closed; only polling (chars: "") is possible`, {
          task_id: task.id,
        });
      }
      const settled = settle(task, args.yield_ms ?? 250, ctx.signal);
      if (data !== "") written = await task.handle.write(data);
      if (args.close_stdin) task.handle.closeStdin();
      await settled;
    }
    return answer(task, written);
  },
});

/**
 * Resolves when the task has ended, when its output has started and then paused for
 * SETTLE_MS, or after `yieldMs` — whichever comes first.
 */
function settle(task: Task, yieldMs: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timers: Array<ReturnType<typeof setTimeout>> = [];
    const unsubscribe: Array<() => void> = [];
    let quiet: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      for (const t of timers) clearTimeout(t);
      clearTimeout(quiet);
      for (const u of unsubscribe) u();
      signal.removeEventListener("abort", done);
      resolve();
    };
    timers.push(setTimeout(done, yieldMs));
    task.ended.then(done);
    signal.addEventListener("abort", done, { once: true });
    const onData = () => {
      clearTimeout(quiet);
      quiet = setTimeout(done, SETTLE_MS);
    };
    for (const s of [task.rawOutput ?? task.stdout, task.stderr]) unsubscribe.push(s.onData(onData));
  });
}

function answer(task: Task, bytesWritten: number): ToolResult {
  const result: ToolResult = { task_id: task.id, bytes_written: bytesWritten, status: task.status };
  const stdout = stdoutText(task);
  for (const stream of [stdout, task.stderr]) {
    const total = stream.total;
    const view = renderRange(stream, Math.min(stream.cursor, total), total, MAX_OUTPUT_BYTES);
    const field = stream === stdout ? "output" : "stderr";
    if (field === "output" || view.text !== "") result[field] = view.text;
    if (view.truncated) result[`${field}_truncated`] = true;
    stream.cursor = total;
  }
  return Object.assign(result, exitFields(task), interactiveFields(task));
}
