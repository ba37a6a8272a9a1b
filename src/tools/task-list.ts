import { z } from "zod";
import type { Task } from "../background/tasks/index.ts";
import { settled } from "./find-task.ts";
import { listEntry, type ListDefaults } from "./results/present.ts";
import { defineTool, type ToolContext } from "./types.ts";
import { resultShapes } from "./results/result-shapes.ts";

/** Built at the tool's first call (defineTool). */
const schema = () =>
  z
    .object({
      status: z
        .enum(["running", "finished", "all"])
        .default("all")
        .describe("Which tasks (default: 'all')."),
      name: z.string().min(1).optional().describe("Service name, * for any text."),
      limit: z.number().int().min(1).optional().describe("Newest N."),
      host: z.string().optional().describe("Host."),
      // (The command line's lists: `ps`, `kill --all`, `down`. A model narrows with the others.)
      max_output_bytes: z.number().int().min(1000).max(2_500_000).optional(),
    })
    .strict();

/** The result schema (its MCP outputSchema), built on demand: see result-shapes.ts. */
function resultSchema(): z.ZodType {
  const { exitShape, sandboxShape, taskStatus } = resultShapes();
  const entry = z.looseObject({
    task_id: z.string(),
    task_type: z.literal("background"),
    kind: z.string(),
    status: taskStatus,
    command: z.string().optional(),
    prompt: z.string().optional(),
    description: z.string().optional(),
    name: z.string().optional(),
    pid: z.number().int().nullable().optional(),
    /** The pid commands in the task's sandbox see (its pid namespace), when it differs from `pid`. */
    sandbox_pid: z.number().int().optional(),
    host: z.string().optional(),
    /** Present (true) for a tty task only. */
    tty: z.boolean().optional(),
    started_at: z.string(),
    ended_at: z.string().optional(),
    ...exitShape,
    lost_reason: z.string().optional(),
    /** Present once a task has been restarted. */
    restarts: z.number().int().optional(),
    restart_on: z.string().optional(),
    restart_pending: z.boolean().optional(),
    note: z.string().optional(),
    spool_error: z.string().optional(),
    ...sandboxShape,
  });
  const session = z.object({ name: z.string(), cwd: z.string() });
  const counts = z.object({ running: z.number().int(), completed: z.number().int(), killed: z.number().int(), lost: z.number().int() });
  return z.looseObject({
    tasks: z.array(entry),
    /** When not every matching task is listed: how many match, by status, and what to do. */
    total: z.number().int().optional(),
    counts: counts.optional(),
    note: z.string().optional(),
    sandbox: z.string().optional(),
    sandbox_level: z.string().optional(),
    sessions: z.array(session).optional(),
  });
}

export const taskListTool = defineTool({
  name: "task_list",
  title: "List tasks",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description:
    "List your background tasks, newest that fit. " +
    "Returns: {tasks: [{task_id, task_type, kind, status, command?, description?, pid, tty?, started_at, ended_at?, exit_code?}], counts?}",
  schema,
  unpublished: ["max_output_bytes"],
  result: resultSchema,
  async run(args, ctx) {
    const matching = ctx.registry.list().filter(matches(args));
    const counts = { running: 0, completed: 0, killed: 0, lost: 0 };
    for (const t of matching) counts[t.status]++;
    const wanted = args.limit === undefined ? matching : matching.slice(-args.limit);
    await settled(wanted);
    const budget = args.max_output_bytes ?? ctx.config.max_output_bytes;
    const defaults = listDefaults(ctx, wanted);
    const sessions = args.host === undefined ? ctx.sessions.list().map((s) => ({ name: s.name, cwd: s.cwd ?? ctx.cwd })) : [];
    const head: Record<string, unknown> = { ...(wanted.length ? defaults.own : {}), ...(sessions.length ? { sessions } : {}) };
    // The newest first, as many as fit (the summary fields that then join them reserved); shown in id order.
    let room = budget - JSON.stringify({ tasks: [], ...head }).length - SUMMARY_BYTES;
    const shown: Task[] = [];
    const entries: ReturnType<typeof listEntry>[] = [];
    for (let i = wanted.length - 1; i >= 0; i--) {
      const entry = listEntry(wanted[i]!, defaults);
      const size = JSON.stringify(entry).length + 1;
      if (size > room && entries.length > 0) break; // the newest is shown whatever its size
      room -= size;
      entries.push(entry);
      shown.push(wanted[i]!);
    }
    entries.reverse();
    ctx.registry.markFinalStatusRead(shown);
    if (entries.length === matching.length) return { tasks: entries, ...head };
    const narrow = entries.length < wanted.length ? "; narrow with status, name or limit" : "";
    const note = `${entries.length} newest of ${matching.length} tasks shown${narrow}`;
    return { tasks: entries, total: matching.length, counts, note, ...head };
  },
});

/** Room kept for `total`, `counts` and `note` when not every task is listed. */
const SUMMARY_BYTES = 220;

/** The tasks the call asks about: background tasks the agent started (not a foreground call's kept output). */
function matches(args: { status: "running" | "finished" | "all"; name?: string; host?: string }): (t: Task) => boolean {
  const name = args.name === undefined ? null : namePattern(args.name);
  return (t) =>
    !t.info.kept_output &&
    (args.status === "all" || (args.status === "running") === t.running) &&
    (args.host === undefined || t.info.host === args.host) &&
    (name === null || (t.info.name !== undefined && name.test(t.info.name)));
}

/** A service name, where `*` stands for any text. */
function namePattern(pattern: string): RegExp {
  const escaped = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${escaped.join(".*")}$`);
}

/** What every entry would repeat is said once: the server's own sandbox, at the result's top. */
function listDefaults(ctx: ToolContext, tasks: Task[]): ListDefaults {
  const mode = ctx.sandboxMode;
  // The level is known once a sandboxed task ran; a list of none probes nothing.
  const level = mode !== "off" && tasks.some((t) => t.sandbox?.level) ? (ctx.sandbox.choice.level ?? undefined) : undefined;
  return { sandbox: mode, sandboxLevel: level, own: { sandbox: mode, ...(level ? { sandbox_level: level } : {}) } };
}
