import { z } from "zod";
import type { Registry } from "../background/tasks/registry.ts";

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

/** Server side: resolves when there is news for the caller (more output, the end, or the timeout). */
export async function awaitOutput(registry: Registry, p: AwaitOutputParams, signal: AbortSignal): Promise<AwaitOutputResult> {
  const task = registry.resolve(p.task_id);
  if (!task) return { found: false, running: false, stdout_total: 0, stderr_total: 0 };
  const snapshot = (): AwaitOutputResult => ({
    found: true,
    running: task.running,
    stdout_total: task.stdout.total,
    stderr_total: task.stderr.total,
  });
  const hasNews = () => !task.running || task.stdout.total > p.stdout_offset || task.stderr.total > p.stderr_offset;
  if (hasNews()) return snapshot();
  const cleanup: Array<() => void> = [];
  await new Promise<void>((resolve) => {
    cleanup.push(task.stdout.onData(() => resolve()), task.stderr.onData(() => resolve()));
    void task.ended.then(() => resolve());
    const timer = setTimeout(resolve, p.timeout_ms);
    cleanup.push(() => clearTimeout(timer));
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
  for (const c of cleanup) c();
  return snapshot();
}
