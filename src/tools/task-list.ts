import { z } from "zod";
import { settled } from "./find-task.ts";
import { listEntry } from "./results/present.ts";
import { defineTool } from "./types.ts";
import { resultShapes } from "./results/result-shapes.ts";

/** Built at the tool's first call (defineTool). */
const schema = () =>
  z
    .object({
      status: z
        .enum(["running", "finished", "all"])
        .default("all")
        .describe("Which tasks (default: 'all')."),
      host: z.string().optional().describe("Host."),
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
    tty: z.boolean(),
    started_at: z.string(),
    ended_at: z.string().optional(),
    ...exitShape,
    lost_reason: z.string().optional(),
    restarts: z.number().int(),
    restart_on: z.string().optional(),
    restart_pending: z.boolean().optional(),
    note: z.string().optional(),
    spool_error: z.string().optional(),
    ...sandboxShape,
  });
  const session = z.object({ name: z.string(), cwd: z.string() });
  return z.looseObject({ tasks: z.array(entry), sessions: z.array(session).optional() });
}

export const taskListTool = defineTool({
  name: "task_list",
  title: "List tasks",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description:
    "List background tasks. " +
    "Returns: {tasks: [{task_id, task_type, kind, status, command?, prompt?, description?, name?, pid, host?, tty, started_at, ended_at?, exit_code?}], sessions?}",
  schema,
  result: resultSchema,
  async run(args, ctx) {
    const which = args.status;
    await settled(ctx.registry.list());
    const shown = ctx.registry.list().filter((t) => (which === "all" || (which === "running") === t.running) && (args.host === undefined || t.info.host === args.host));
    const tasks = shown.map(listEntry);
    ctx.registry.markFinalStatusRead(shown);
    const sessions = args.host === undefined ? ctx.sessions.list().map((s) => ({ name: s.name, cwd: s.cwd ?? ctx.cwd })) : [];
    return sessions.length ? { tasks, sessions } : { tasks };
  },
});
