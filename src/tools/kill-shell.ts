import { z } from "zod";
import { findTask } from "./find-task.ts";
import { exitFields } from "./results/present.ts";
import { defineTool } from "./types.ts";
import { resultShapes } from "./results/result-shapes.ts";

/** Built at the tool's first call (defineTool). */
const schema = () =>
  z
    .object({
      task_id: z.string().min(1).describe("Task id (bg-N) or service name."),
    })
    .strict();

/** The result schema (its MCP outputSchema), built on demand: see result-shapes.ts. */
function resultSchema(): z.ZodType {
  const { exitShape } = resultShapes();
  return z.looseObject({
    task_id: z.string(),
    task_type: z.literal("background"),
    status: z.enum(["killed", "already_completed"]),
    success: z.boolean(),
    ...exitShape,
  });
}

export const killShellTool = defineTool({
  name: "kill_shell",
  title: "Stop a task",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  description:
    "Kill a background task and all it started; returns once it is gone. Returns: {task_id, task_type, status: 'killed'|'alre" +
    "ady_completed', success, exit_code?}",
  schema,
  result: resultSchema,
  async run(args, ctx) {
    const task = findTask(ctx, args.task_id);
    if (task.endCertain) await task.ended; // killed a moment ago: its exit is on its way here
    if (!task.running) await task.kill(); // an ended task: cancels a scheduled or starting restart
    if (task.running) {
      await task.kill();
      // Its end is certain once killed (SPEC §18): no need to wait for its exit to travel here.
      if (!task.endCertain) await task.ended;
      if (task.status === "killed") {
        await ctx.registry.record(task);
        ctx.registry.markFinalStatusRead([task]);
        return { task_id: task.id, task_type: "background", status: "killed", success: true };
      }
    }
    const result = { task_id: task.id, task_type: "background", status: "already_completed", success: true, ...exitFields(task) };
    ctx.registry.markFinalStatusRead([task]);
    return result;
  },
});
