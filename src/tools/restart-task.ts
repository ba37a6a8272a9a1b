import { Task } from "../background/tasks/task.ts";
import { errorResult, type ToolResult } from "./errors.ts";
import { compileService, startService, type ServiceArgs } from "./service.ts";
import { findTask } from "./task-fields.ts";
import type { ToolContext } from "./types.ts";

/**
 * Restarts a background task in place: its process group is terminated, then the same
 * command starts again with the same cwd, env, name and readiness, under the same id (its
 * logs go on in the same files). Returns once it is ready again, like the start did.
 */
export async function restartTask(ctx: ToolContext, ref: string): Promise<ToolResult> {
  const task = findTask(ctx, ref);
  if (!(task instanceof Task)) return task;
  if (!task.relaunch) {
    return errorResult(
      "INVALID_ARGUMENT",
      `Task ${task.id} cannot be restarted in place: only background commands started by this daemon can (not terminal (tty) tasks, subagents or tasks recovered after a daemon restart); start it again instead`,
      { task_id: task.id },
    );
  }
  await task.kill();
  await task.ended;
  try {
    await ctx.launcher.relaunch(task);
  } catch (e) {
    return errorResult("IO_ERROR", `Failed to restart ${task.id}: ${(e as Error).message}`, { task_id: task.id });
  }
  const args = { ...(task.serviceArgs ?? {}), command: task.command ?? "", run_in_background: true } as ServiceArgs;
  const service = compileService(args) as { ready?: RegExp; error?: unknown };
  // Watches (notify_pattern) are still attached to the task's streams: only readiness is replayed.
  const started = "error" in service ? {} : await startService(task, args, { ready: service.ready }, ctx);
  if ("error" in started) return started;
  return {
    task_id: task.id,
    status: task.status,
    ...(task.name !== undefined ? { name: task.name } : {}),
    pid: task.pid ?? null,
    restarts: task.restarts,
    ...started,
  };
}
