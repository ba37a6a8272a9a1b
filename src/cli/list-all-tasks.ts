import type { DaemonClient } from "./daemon-client.ts";
import type { ToolResult } from "../errors.ts";

/**
 * task_list for a verb that needs every task (ps, kill --all, down, daemon status): a model's
 * list stops at its 8,000-byte budget, a verb's reaches the largest result there is. Each
 * entry is whole again: the defaults a model's list leaves out (`tty`, `restarts`, the
 * server's sandbox, said once at the list's top) are filled back in.
 */
export async function listAllTasks(client: DaemonClient, args: { status: "running" | "all"; host?: string }): Promise<ToolResult> {
  const list = await client.call("task_list", { ...args, max_output_bytes: 2_500_000 });
  if (list.error || !Array.isArray(list.tasks)) return list;
  const own = list.sandbox === undefined ? {} : { sandbox: list.sandbox, ...(list.sandbox_level !== undefined ? { sandbox_level: list.sandbox_level } : {}) };
  const tasks = (list.tasks as ToolResult[]).map((t) => ({ ...t, tty: t.tty ?? false, restarts: t.restarts ?? 0, ...(t.host === undefined && t.sandbox === undefined ? own : {}) }));
  return { ...list, tasks };
}
