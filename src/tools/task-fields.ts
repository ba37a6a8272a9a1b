import type { Task } from "../background/tasks/task.ts";
import { errorResult, type ErrorResult } from "./errors.ts";
import type { ToolContext } from "./types.ts";

/** Looks a task up by id or name (a name means its newest task), or gives the SPEC's NOT_FOUND error. */
export function findTask(ctx: ToolContext, id: string): Task | ErrorResult {
  const task = ctx.registry.resolve(id);
  if (task) return task;
  return errorResult("NOT_FOUND", `Task ${id} not found (it may have expired; task_list shows the known tasks)`, { task_id: id });
}

/** Fields that identify a task in every result: parity `task_type`, plus `kind`. */
export function identity(task: Task): { task_id: string; task_type: "background"; kind: Task["kind"] } {
  return { task_id: task.id!, task_type: "background", kind: task.kind };
}
