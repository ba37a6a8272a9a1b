import { z } from "zod";
import { listEntry } from "./present.ts";
import { defineTool } from "./types.ts";

const schema = z
  .object({
    status: z
      .enum(["running", "finished", "all"])
      .default("all")
      .describe("Which tasks to list: 'running', 'finished' (completed, killed or lost) or 'all'. (default: 'all')"),
  })
  .strict();

export const taskListTool = defineTool({
  name: "task_list",
  title: "List tasks",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description:
    "List background tasks (bash commands and subagents), ordered by id, with their status. " +
    "Returns: {tasks: [{task_id, task_type, kind, status, command?, prompt?, description?, name?, pid, host?, tty, started_at, ended_at?, exit_code?, signal?, lost_reason?, restarts, restart_on?, restart_pending?, note?, spool_error?, sandbox?, sandbox_level?, sandbox_denied?}]}",
  schema,
  async run(args, ctx) {
    const which = args.status;
    const shown = ctx.registry.list().filter((t) => which === "all" || (which === "running") === t.running);
    const tasks = shown.map(listEntry);
    ctx.registry.markFinalStatusRead(shown);
    return { tasks };
  },
});
