import { z } from "zod";

/**
 * The daemon's one extension to MCP: a long poll that returns as soon as a task has output
 * beyond the given offsets, or has ended. `logs --follow` pairs it with `task_output`
 * range reads, so each line is shown within milliseconds without polling.
 */
export const AWAIT_OUTPUT_METHOD = "agent-shell/await_output";

export const AwaitOutputRequestSchema = z.object({
  method: z.literal(AWAIT_OUTPUT_METHOD),
  params: z.object({
    task_id: z.string(),
    stdout_offset: z.number().int().min(0),
    stderr_offset: z.number().int().min(0),
    timeout_ms: z.number().int().min(0).max(600_000),
  }),
});

export const AwaitOutputResultSchema = z.object({
  found: z.boolean(),
  running: z.boolean(),
  stdout_total: z.number(),
  stderr_total: z.number(),
});

export type AwaitOutputParams = z.infer<typeof AwaitOutputRequestSchema>["params"];
export type AwaitOutputResult = z.infer<typeof AwaitOutputResultSchema>;
