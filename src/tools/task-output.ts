import { z } from "zod";
import { startProgress } from "../background/watch/index.ts";
import { firstOf } from "../first-of.ts";
import { findTask, settled } from "./find-task.ts";
import { outputView, taskOutputs } from "./results/present.ts";
import { outputParameters, userRegex } from "./params/schema-helpers.ts";
import { defineTool } from "./types.ts";
import { resultShapes } from "./results/result-shapes.ts";
import type { ToolResult } from "../errors.ts";

const MAX_BYTES_LIMIT = 1_000_000;

/** Built at the tool's first call (defineTool). */
const schema = () =>
  z
    .object({
      task_id: z.string().min(1).optional().describe("Task id (bg-N) or service name."),
      task_ids: z.array(z.string().min(1)).min(1).optional().describe("Several tasks."),
      until: z
        .enum(["any", "all"])
        .optional()
        .describe("With task_ids (default: 'all')."),
      wait: z.boolean().default(false).describe("Block until the task ends (default: false)."),
      timeout_seconds: z.number().int().min(0).default(30).describe("Longest wait (default: 30)."),
      only_new: z.boolean().default(false).describe("Only output since the last read (default: false)."),
      offset: z.number().int().min(0).optional().describe("Raw byte range start."),
      length: z.number().int().min(0).max(MAX_BYTES_LIMIT).optional().describe("Range length."),
      stream: z.enum(["stdout", "stderr"]).optional().describe("Stream of the range (default: 'stdout')."),
      tail_lines: z.number().int().min(0).optional().describe("Only the last N lines."),
      filter: z.string().optional().describe("Only lines matching this regex."),
      max_bytes: z.number().int().min(1).max(MAX_BYTES_LIMIT).optional().describe("Output budget (default: 8000)."),
      output: outputParameters().output,
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
  const { taskView, taskStatus, exitShape } = resultShapes();
  /** A task's status alone, where its whole result would not fit the budget. */
  const brief = z.object({ task_id: z.string(), status: taskStatus, ...exitShape });
  const several = z.looseObject({
    results: z.array(z.union([taskView, brief])),
    finished: z.array(z.string()),
    omitted: z.record(z.string(), z.number().int()).optional(),
    note: z.string().optional(),
  });
  return z.union([taskView, several]);
}

export const taskOutputTool = defineTool({
  name: "task_output",
  title: "Read a task's output",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    "Status and output of background tasks; wait: true blocks until the end; offset/length" +
    ": raw log bytes. Returns: {task_id, task_type, kind, status, stdout, stderr?, exit_code?, signal?, stdout_total_bytes, st" +
    "derr_total_bytes, screen?} | {results, finished}",
  schema,
  aliases: { timeout: "timeout_seconds" },
  result: resultSchema,
  async run(args, ctx) {
    const filter = args.filter !== undefined ? userRegex("task_output", "filter", args.filter) : undefined;
    const tasks = (args.task_ids ?? [args.task_id!]).map((id) => findTask(ctx, id));
    await settled(tasks);
    if (args.wait) {
      const ended = tasks.map((t) => t.ended);
      const until = args.task_ids ? (args.until ?? "all") : "all";
      // While it waits, a client that asked for progress hears about it, as during a long bash.
      const stopProgress = ctx.progress ? startProgress(tasks, ctx.progress) : undefined;
      try {
        // A wait ends before the client would give up on it (SPEC §23): the status then says running.
        const timeoutMs = Math.min(args.timeout_seconds * 1000, ctx.answerBy === undefined ? Infinity : Math.max(0, ctx.answerBy - Date.now()));
        await firstOf({ promises: { ended: until === "any" ? Promise.race(ended) : Promise.all(ended) }, timeoutMs, signal: ctx.signal });
      } finally {
        stopProgress?.();
      }
    }
    await ctx.registry.recorded(tasks); // an end just seen is in meta.json when this answers
    const range = args.offset !== undefined ? { stream: args.stream ?? "stdout", offset: args.offset, length: args.length } : undefined;
    // One budget for the whole result, however many tasks it reads.
    const results = taskOutputs(tasks, { view: outputView(ctx.config, args), onlyNew: args.only_new, range, filter, tailLines: args.tail_lines });
    ctx.registry.markFinalStatusRead(tasks);
    if (!args.task_ids) return results[0]!;
    const finished = tasks.filter((t) => !t.running).map((t) => t.id!);
    return { ...fitResults(results, args.max_bytes ?? ctx.config.max_output_bytes), finished };
  },
});

/** Room for each result's fields beside the output budget (their output shares the budget), for at most WHOLE_RESULTS of them. */
const FIELDS_BYTES = 500;
const WHOLE_RESULTS = 20;

/**
 * Several tasks' results within the budget, whatever their number (SPEC §18): whole results
 * while they fit (twenty always do: their output shares the budget), then each task's status
 * alone, then counts by status for the rest.
 */
function fitResults(results: ToolResult[], budget: number): ToolResult {
  let room = budget + FIELDS_BYTES * Math.min(results.length, WHOLE_RESULTS);
  const shown: ToolResult[] = [];
  let brief = 0;
  for (const result of results) {
    const whole = brief === 0 ? JSON.stringify(result).length + 1 : Infinity;
    if (whole <= room || shown.length === 0) {
      shown.push(result);
      room -= whole;
      continue;
    }
    const status: ToolResult = { task_id: result.task_id, status: result.status };
    for (const key of ["exit_code", "signal"]) if (result[key] !== undefined) status[key] = result[key];
    const size = JSON.stringify(status).length + 1;
    if (size > room) break;
    shown.push(status);
    room -= size;
    brief++;
  }
  if (shown.length === results.length && brief === 0) return { results };
  const counts: Record<string, number> = {};
  for (const r of results.slice(shown.length)) counts[r.status as string] = (counts[r.status as string] ?? 0) + 1;
  const left = results.length - shown.length;
  const note =
    `${brief} result(s) cut to their status${left ? `, ${left} left out (counts by status in omitted)` : ""} to fit the budget: ` +
    "read each with task_output {task_id}";
  return { results: shown, ...(left ? { omitted: counts } : {}), note };
}
