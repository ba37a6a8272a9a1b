import type { DaemonClient } from "./daemon-client.ts";

/**
 * task_list for a verb that needs every task (ps, kill --all, down, daemon status): a model's
 * list stops at its 8,000-byte budget, a verb's reaches the largest result there is.
 */
export function listAllTasks(client: DaemonClient, args: { status: "running" | "all"; host?: string }) {
  return client.call("task_list", { ...args, max_output_bytes: 2_500_000 });
}
