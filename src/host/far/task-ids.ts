import { isErrorResult, type ToolResult } from "../../errors.ts";

/**
 * Far-side task ids as the near side shows them: the far side's own id behind the host's
 * name, `box:bg-3`. Nothing is stored near side, so the ids survive pipe drops and
 * near-side restarts as long as the far side's daemon keeps its tasks. A service name works
 * the same way (`box:web`).
 */
export const SEPARATOR = ":";

export function nearId(host: string, farId: string): string {
  return `${host}${SEPARATOR}${farId}`;
}

/** `box:bg-3` → {host: "box", id: "bg-3"} when `isFar("box")`; null for a local id. */
export function splitId(id: string, isFar: (host: string) => boolean): { host: string; id: string } | null {
  const at = id.indexOf(SEPARATOR);
  if (at <= 0) return null;
  const host = id.slice(0, at);
  return isFar(host) ? { host, id: id.slice(at + 1) } : null;
}

/** A far side's result as a near-side one: its task ids prefixed, `host` added (each entry of a list too). */
export function nearResult(host: string, result: ToolResult): ToolResult {
  if (isErrorResult(result)) {
    const context: Record<string, unknown> = { ...result.context, host };
    if (typeof context.task_id === "string") context.task_id = nearId(host, context.task_id);
    // "Task bg-3 not found" names the near id the caller used.
    const error = result.error.replace(/\b(Task|task) (bg-\d+)\b/g, (_, word: string, id: string) => `${word} ${nearId(host, id)}`);
    return { ...result, error, context };
  }
  const out: ToolResult = { ...entry(host, result) };
  if (Array.isArray(result.results)) out.results = (result.results as ToolResult[]).map((r) => entry(host, r));
  if (Array.isArray(result.tasks)) out.tasks = (result.tasks as ToolResult[]).map((r) => entry(host, r));
  if (Array.isArray(result.finished)) out.finished = (result.finished as string[]).map((id) => nearId(host, id));
  return out;
}

function entry(host: string, r: ToolResult): ToolResult {
  return typeof r.task_id === "string" ? { ...r, task_id: nearId(host, r.task_id), host } : { ...r, host };
}

/** The same arguments with the far side's ids (for task_output's task_ids, kill_shell, write_stdin). */
export function farArgs(args: Record<string, unknown>, toFar: (id: string) => string): Record<string, unknown> {
  const out = { ...args };
  if (typeof out.task_id === "string") out.task_id = toFar(out.task_id);
  if (Array.isArray(out.task_ids)) out.task_ids = (out.task_ids as string[]).map(toFar);
  return out;
}
