import { z } from "zod";
import { firstOf } from "../first-of.ts";
import { findTask } from "./find-task.ts";
import { outputView, taskOutput } from "./present.ts";
import { outputParameters, userRegex } from "./schema-helpers.ts";
import { defineTool } from "./types.ts";
import { resultShapes } from "./result-shapes.ts";

const MAX_BYTES_LIMIT = 1_000_000;

const schema = z
  .object({
    task_id: z.string().min(1).optional().describe("The task to read: its id (e.g. 'bg-1') or a service name (its newest task). Give this or task_ids."),
    task_ids: z.array(z.string().min(1)).min(1).optional().describe("Several tasks to read (and wait for, with `until`)."),
    until: z
      .enum(["any", "all"])
      .optional()
      .describe("With task_ids and wait: return when any one or when all of them have finished. (default: 'all')"),
    wait: z.boolean().default(false).describe("If true, block until the task ends or `timeout` passes. (default: false)"),
    timeout: z.number().int().min(0).default(30).describe("Maximum seconds to wait when wait=true. (default: 30)"),
    only_new: z.boolean().default(false).describe("Return only output produced since the previous read of this task. (default: false)"),
    offset: z.number().int().min(0).optional().describe("Byte offset of a range read of the full (spooled) output; does not move the read cursor."),
    length: z.number().int().min(0).max(MAX_BYTES_LIMIT).optional().describe(`Bytes to read from \`offset\`, raw. (default: max_bytes, at most ${MAX_BYTES_LIMIT})`),
    stream: z.enum(["stdout", "stderr"]).optional().describe("Stream for a range read. (default: 'stdout')"),
    tail_lines: z.number().int().min(0).optional().describe("Return only the last N lines of each stream."),
    filter: z.string().optional().describe("Regular expression: return only the lines that match it."),
    max_bytes: z.number().int().min(1).max(MAX_BYTES_LIMIT).optional().describe("Output budget, stdout+stderr together. (default: config, 8000)"),
    output: outputParameters.output,
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

/** The result schema (its MCP outputSchema), built on demand: see result-shapes.ts. */
function resultSchema(): z.ZodType {
  const { taskView } = resultShapes();
  return z.union([taskView, z.looseObject({ results: z.array(taskView), finished: z.array(z.string()) })]);
}

export const taskOutputTool = defineTool({
  name: "task_output",
  title: "Read a task's output",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    "Get the output and status of a background task, optionally waiting for it to end (the wait returns as soon as the task exits). " +
    "Status is 'running', 'completed' (ended on its own, whatever its exit code), 'killed' or 'lost'. Each call moves the task's read cursor " +
    "to the end of its output, so only_new returns what arrived since the last read. offset/length read any byte range of the full output " +
    "from the log file. Returns: {task_id, task_type, kind, status, host?, stdout, stderr?, exit_code?, signal?, lost_reason?, note?, stdout_total_bytes, sandbox?, sandbox_level?, sandbox_denied?, " +
    "stderr_total_bytes, duration_ms, stdout_truncated?, stderr_truncated?, stdout_path?, stderr_path?, spool_error?, screen?, waiting_for_input?, " +
    "prompt?}; with task_ids: " +
    "{results: [...], finished: [task_id...]}",
  schema,
  result: resultSchema,
  async run(args, ctx) {
    const filter = args.filter !== undefined ? userRegex("task_output", "filter", args.filter) : undefined;
    const tasks = (args.task_ids ?? [args.task_id!]).map((id) => findTask(ctx, id));
    if (args.wait) {
      const ended = tasks.map((t) => t.ended);
      const until = args.task_ids ? (args.until ?? "all") : "all";
      await firstOf({ promises: { ended: until === "any" ? Promise.race(ended) : Promise.all(ended) }, timeoutMs: args.timeout * 1000, signal: ctx.signal });
    }
    const range = args.offset !== undefined ? { stream: args.stream ?? "stdout", offset: args.offset, length: args.length } : undefined;
    const results = tasks.map((t) => taskOutput(t, { view: outputView(ctx.config, args), onlyNew: args.only_new, range, filter, tailLines: args.tail_lines }));
    ctx.registry.markFinalStatusRead(tasks);
    if (!args.task_ids) return results[0]!;
    return { results, finished: tasks.filter((t) => !t.running).map((t) => t.id!) };
  },
});
