import type { Task } from "../background/tasks/index.ts";
import { CodedError } from "../errors.ts";
import type { ToolContext } from "./types.ts";

/** The task with this id; NOT_FOUND (saying how to find the known ones) otherwise. */
export function findTask(ctx: ToolContext, id: string): Task {
  const task = ctx.registry.resolve(id); // an id, or a name: its newest task
  if (task) return task;
  throw new CodedError("NOT_FOUND", `Task ${id} not found (it may have expired; task_list shows the known tasks)`, { task_id: id });
}

/**
 * Tasks as they are once every kill that made its task's end certain has been recorded (a
 * task killed a moment ago, kill_shell answers before its exit has travelled here, is read
 * with its exit status and its last output, within a millisecond) and their log files exist
 * (a task just started in a burst: made off the event loop, within a few milliseconds).
 */
export async function settled(tasks: Task[]): Promise<void> {
  await Promise.all([...tasks.filter((t) => t.endCertain && t.running).map((t) => t.ended), ...tasks.map((t) => t.logsReady)]);
}
