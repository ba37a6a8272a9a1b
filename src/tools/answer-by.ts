import type { ToolContext } from "./types.ts";

/**
 * When a foreground command is handed over as a background task because its caller is about
 * to give up (SPEC §23: the MCP client's own tool timeout, ctx.answerBy): shortly before
 * that, unless the call's own time limit ends first (it then times out as asked) or it asked
 * for an earlier hand-over itself.
 */
export function handOver(ctx: Pick<ToolContext, "answerBy">, timeoutMs: number, ownAfterMs: number | undefined): { afterMs: number | undefined; byCaller: boolean } {
  if (ctx.answerBy === undefined) return { afterMs: ownAfterMs, byCaller: false };
  const left = Math.max(0, ctx.answerBy - Date.now());
  if (left >= timeoutMs || (ownAfterMs !== undefined && ownAfterMs <= left)) return { afterMs: ownAfterMs, byCaller: false };
  return { afterMs: left, byCaller: true };
}

/** Said with a command handed over because its caller would give up. */
export function keepsRunningNote(taskId: string | null): string {
  return `The client stops waiting for a call soon (client_timeout_seconds), so this command was moved to the background and keeps running: task_output {task_id: "${taskId}", wait: true} gets its end.`;
}
