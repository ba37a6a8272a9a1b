import { z } from "zod";
import type { Task } from "../background/tasks/task.ts";
import { exitFields } from "./output-fields.ts";
import { identity } from "./task-fields.ts";
import { defineTool } from "./types.ts";
import { sandboxFields } from "./sandbox-fields.ts";

const schema = z
  .object({
    status: z
      .enum(["running", "finished", "all"])
      .optional()
      .describe("Which tasks to list: 'running', 'finished' (completed, killed or lost) or 'all'. (default: 'all')"),
  })
  .strict();

export function listEntry(task: Task): Record<string, unknown> {
  const spoolError = task.stdout.spool?.error ?? task.stderr.spool?.error;
  return {
    ...identity(task),
    status: task.status,
    ...(task.command !== undefined ? { command: task.command } : {}),
    ...(task.prompt !== undefined ? { prompt: task.prompt } : {}),
    ...(task.description !== undefined ? { description: task.description } : {}),
    ...(task.name !== undefined ? { name: task.name } : {}),
    pid: task.pid ?? null,
    ...(task.host !== undefined ? { host: task.host } : {}),
    tty: task.tty,
    started_at: task.startedAt.toISOString(),
    ...(task.endedAt ? { ended_at: task.endedAt.toISOString() } : {}),
    ...exitFields(task),
    ...(task.lostReason ? { lost_reason: task.lostReason } : {}),
    ...(task.running && task.handle?.note ? { note: task.handle.note } : {}),
    ...(spoolError ? { spool_error: spoolError } : {}),
    ...sandboxFields(task),
  };
}

export const taskListTool = defineTool({
  name: "task_list",
  description:
    "List background tasks (bash commands and subagents), ordered by id, with their status. " +
    "Returns: {tasks: [{task_id, task_type, kind, status, command?, prompt?, description?, name?, pid, host?, tty, started_at, ended_at?, exit_code?, signal?, lost_reason?, note?, spool_error?, sandbox?, sandbox_level?, sandbox_denied?}]}",
  schema,
  async run(args, ctx) {
    const which = args.status ?? "all";
    const tasks = ctx.registry
      .list()
      .filter((t) => which === "all" || (which === "running") === t.running)
      .map(listEntry);
    return { tasks };
  },
});
