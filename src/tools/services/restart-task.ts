import { CodedError, type ToolResult } from "../../errors.ts";
import { findTask } from "../find-task.ts";
import { compileService, startService, type ServiceArgs } from "./service.ts";
import type { ToolContext } from "../types.ts";

/**
 * Restarts a background task in place: its process group is terminated, then the same
 * command starts again with the same cwd, env, name and readiness, under the same id (its
 * logs go on in the same files). Returns once it is ready again, like the start did.
 */
export async function restartTask(ctx: ToolContext, ref: string): Promise<ToolResult> {
  const task = findTask(ctx, ref);
  if (!task.relaunch) {
    throw new CodedError(
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
    throw new CodedError("IO_ERROR", `Failed to restart ${task.id}: ${(e as Error).message}`, { task_id: task.id });
  }
  const args = { ...(task.serviceArgs ?? {}), command: task.info.command ?? "", run_in_background: true } as ServiceArgs;
  // Watches (notify_pattern) are still attached to the task's streams: only readiness is replayed.
  const started = await startService(task, args, { ready: compileService(args).ready }, ctx);
  return {
    task_id: task.id,
    status: task.status,
    ...(task.info.name !== undefined ? { name: task.info.name } : {}),
    pid: task.pid ?? null,
    restarts: task.restarts,
    ...started,
  };
}
