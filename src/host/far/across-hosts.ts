import { isErrorResult, type ToolResult } from "../../errors.ts";

/** The task ids of one host in a task_output call (`host` null: local tasks), in the caller's order. */
export interface IdGroup {
  host: string | null;
  ids: string[];
}

/** Runs task_output for one group (its own task_ids, local or forwarded). */
export type GroupRead = (group: IdGroup, args: Record<string, unknown>, signal: AbortSignal) => Promise<ToolResult>;

/**
 * task_output with task_ids on several hosts: one call per host, all at once, combined as
 * one result in the caller's order. `until: "any"` returns when the first group reports a
 * finished task: the others' waits are cancelled and they are read once more without waiting.
 */
export async function readAcrossHosts(groups: IdGroup[], args: Record<string, unknown>, read: GroupRead, signal: AbortSignal): Promise<ToolResult> {
  const order = (args.task_ids as string[]) ?? [];
  const results = new Map<IdGroup, ToolResult>();
  const any = args.wait === true && args.until === "any";
  if (!any) {
    await Promise.all(groups.map(async (g) => results.set(g, await read(g, { ...args, task_ids: g.ids }, signal))));
  } else {
    const stop = new AbortController();
    const both = AbortSignal.any([signal, stop.signal]);
    await Promise.all(
      groups.map(async (g) => {
        try {
          const r = await read(g, { ...args, task_ids: g.ids }, both);
          results.set(g, r);
          if (isErrorResult(r) || (r.finished as string[]).length > 0) stop.abort();
        } catch (e) {
          if (!stop.signal.aborted || signal.aborted) throw e;
        }
      }),
    );
    // The waits cut short: their status now, without waiting.
    for (const g of groups.filter((g) => !results.has(g))) results.set(g, await read(g, { ...args, task_ids: g.ids, wait: false }, signal));
  }
  const failed = [...results.values()].find(isErrorResult);
  if (failed) return failed;
  // Each group answers in its own order; put the entries back in the caller's.
  const taken = new Map<IdGroup, number>();
  const entries = order.map((id) => {
    const g = groups.find((g) => g.ids.includes(id))!;
    const k = taken.get(g) ?? 0;
    taken.set(g, k + 1);
    return (results.get(g)!.results as ToolResult[])[k]!;
  });
  const finished = [...results.values()].flatMap((r) => r.finished as string[]);
  return { results: entries, finished };
}
