import { z } from "zod";
import type { Task } from "../background/tasks/index.ts";
import { keyBytes, KNOWN_KEYS_HELP } from "../background/terminal/index.ts";
import { CodedError, invalidArgument } from "../errors.ts";
import { firstOf } from "../first-of.ts";
import { findTask } from "./find-task.ts";
import { outputView, stdinAnswer } from "./results/present.ts";
import { defineTool } from "./types.ts";
import { resultShapes } from "./results/result-shapes.ts";

const MAX_YIELD_MS = 10_000;
/** Once output has started, this much quiet means the program has answered. */
const SETTLE_MS = 150;

/** Built at the tool's first call (defineTool). */
const schema = () =>
  z
    .object({
      task_id: z.string().min(1).describe("A tty task, or one with keep_stdin_open."),
      chars: z
        .string()
        .default("")
        .describe("Text to type; '' only polls (default: '')."),
      keys: z
        .array(z.string())
        .default([])
        .describe("Named keys after chars: enter, tab, up, ctrl-c…"),
      close_stdin: z.boolean().default(false).describe("Then close stdin (default: false)."),
      yield_ms: z
        .number()
        .int()
        .min(0)
        .max(MAX_YIELD_MS)
        .default(250)
        .describe("Wait for output, ms (default: 250)."),
    })
    .strict();

/** The result schema (its MCP outputSchema), built on demand: see result-shapes.ts. */
function resultSchema(): z.ZodType {
  const { exitShape, interactiveShape, taskStatus } = resultShapes();
  return z.looseObject({
    task_id: z.string(),
    bytes_written: z.number().int(),
    status: taskStatus,
    output: z.string(),
    stderr: z.string().optional(),
    output_truncated: z.boolean().optional(),
    stderr_truncated: z.boolean().optional(),
    ...exitShape,
    ...interactiveShape,
  });
}

export const writeStdinTool = defineTool({
  name: "write_stdin",
  title: "Type into a task",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  description:
    "Type into an interactive task and read its response (up to yield_ms). " +
    "Returns: {task_id, bytes_written, status, output, screen?, exit_code?, waiting_for_input?, prompt?}",
  schema,
  result: resultSchema,
  async run(args, ctx) {
    const unknown = args.keys.find((k) => keyBytes(k, { tty: true, applicationCursor: false }) === null);
    if (unknown !== undefined) {
      throw invalidArgument("write_stdin", "keys", `unknown key '${unknown}'. Known keys: ${KNOWN_KEYS_HELP}`, { key: unknown });
    }
    const task = findTask(ctx, args.task_id);
    if (!task.info.tty && !task.keepStdinOpen) {
      throw new CodedError(
        "INVALID_ARGUMENT",
        `Task ${task.id} has no writable stdin: start it with bash tty: true, or with run_in_background: true and keep_stdin_open: true, to write to it`,
        { task_id: task.id },
      );
    }
    let written = 0;
    if (task.running) {
      const mode = { tty: task.info.tty, applicationCursor: task.terminal?.applicationCursorKeys ?? false };
      const data = args.chars + args.keys.map((k) => keyBytes(k, mode)!).join("");
      if ((data !== "" || args.close_stdin) && !task.stdinOpen) {
        throw new CodedError("INVALID_ARGUMENT", `The stdin of task ${task.id} is already closed; only polling (chars: "") is possible`, {
          task_id: task.id,
        });
      }
      const settled = settle(task, args.yield_ms, ctx.signal);
      if (data !== "") written = await task.write(data);
      if (args.close_stdin) task.closeStdin();
      await settled;
    }
    return stdinAnswer(task, written, outputView(ctx.config, {}));
  },
});

/**
 * Resolves when the task has ended, when its output has started and then paused for
 * SETTLE_MS, or after `yieldMs` — whichever comes first.
 */
async function settle(task: Task, yieldMs: number, signal: AbortSignal): Promise<void> {
  const quietAfterOutput = (settle: (o: "settled") => void) => {
    let quiet: ReturnType<typeof setTimeout> | undefined;
    const offs = [task.rawOutput ?? task.stdout, task.stderr].map((s) =>
      s.onData(() => {
        clearTimeout(quiet);
        quiet = setTimeout(() => settle("settled"), SETTLE_MS);
      }),
    );
    return () => {
      clearTimeout(quiet);
      for (const off of offs) off();
    };
  };
  await firstOf({ promises: { ended: task.ended }, listeners: [quietAfterOutput], timeoutMs: yieldMs, signal });
}
