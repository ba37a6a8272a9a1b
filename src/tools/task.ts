import { z } from "zod";
import { runForeground } from "../background/tasks/index.ts";
import { AUTODETECT_TEMPLATES, expandTemplate, resolveAgentTemplate } from "../config/agent-command.ts";
import { asCodedError, CodedError } from "../errors.ts";
import { childEnv } from "../runtime/env.ts";
import { exitFields, outputView, runOutput } from "./present.ts";
import { envSchema, osString, outputParameters } from "./schema-helpers.ts";
import { defineTool } from "./types.ts";
import { resultShapes } from "./result-shapes.ts";
import { requestBinding } from "../safety/confirmations.ts";
import { callSandbox, guardSandbox, sandboxParameter } from "./sandbox/guard.ts";
import { sandboxFields } from "./sandbox/fields.ts";

const schema = z
  .object({
    prompt: osString().min(1, "must be a non-empty string").describe("The task for the subagent, passed as one argument (never through a shell)."),
    background: z.boolean().default(false).describe("Return at once with a task_id; follow it with task_output, stop it with kill_shell. (default: false)"),
    timeout_seconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Foreground time limit; on expiry the subagent and everything it started are terminated. (default: config task_timeout_seconds, 1800)"),
    env: envSchema().optional().describe("Environment variables added to the inherited environment (API keys are inherited). (default: none)"),
    description: z.string().optional().describe("Short human-readable description; shown in task_list."),
    sandbox: sandboxParameter,
    ...outputParameters,
    confirmed: z.boolean().optional().describe("Set to true only after the user approved a call that returned needs_confirmation (a looser sandbox). (default: false)"),
  })
  .strict();

/** The result schema (its MCP outputSchema), built on demand: see result-shapes.ts. */
function resultSchema(): z.ZodType {
  const { exitShape, needsConfirmation, runOutputShape, sandboxShape } = resultShapes();
  return z.union([
    z.looseObject({ status: z.enum(["completed", "failed"]), ...exitShape, exit_code: z.number().int(), ...runOutputShape, ...sandboxShape }),
    z.looseObject({ task_id: z.string(), status: z.literal("running"), prompt: z.string() }),
    needsConfirmation,
  ]);
}

export const taskTool = defineTool({
  name: "task",
  title: "Run a subagent",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  description:
    "Run a subagent: another coding-agent CLI in non-interactive mode (configured with agent_command, else the first of claude, codex, gemini, " +
    "clemini found on PATH), given `prompt`, in the server's cwd with stdin closed. Use for delegated or parallel work. " +
    "Runs in the OS sandbox (its own state dirs writable). " +
    "Returns: {status: 'completed'|'failed', exit_code, stdout, stderr, sandbox, sandbox_level?, sandbox_denied?, signal?, stdout_truncated?, stderr_truncated?, stdout_path?, stderr_path?, output_task_id?} " +
    "in the foreground; {task_id, status: 'running', prompt} with background.",
  schema,
  result: resultSchema,
  taskSupport: "optional",
  async run(args, ctx) {
    const env = childEnv(args.env);
    const template = resolveAgentTemplate(ctx.config.agent_command, env.PATH);
    if (!template) {
      throw new CodedError(
        "INVALID_ARGUMENT",
        `No subagent CLI configured and none found on PATH (tried ${AUTODETECT_TEMPLATES.map((t) => t[0]).join(", ")}). ` +
          `Configure one as an argv template: agent_command = ["my-agent", "-p", "{prompt}"] in config.toml, ` +
          `--agent-command '["my-agent","-p","{prompt}"]', or AGENT_SHELL_AGENT_COMMAND; {prompt} and {cwd} are replaced inside arguments.`,
        { prompt: args.prompt },
      );
    }
    const argv = expandTemplate(template, { prompt: args.prompt, cwd: ctx.cwd });
    const sandboxed = await guardSandbox(ctx, { key: args.prompt, field: "prompt", sandbox: args.sandbox, confirmed: args.confirmed, description: args.description, binding: requestBinding("task", args) });
    if ("result" in sandboxed) return sandboxed.result;
    const contained = callSandbox(ctx, sandboxed.mode, ctx.cwd, { agent: true });
    const request = {
      kind: "task" as const,
      prompt: args.prompt,
      description: args.description,
      spec: { command: argv.join(" "), argv, cwd: ctx.cwd, env, stdin: null, sandbox: contained.run },
      runtime: ctx.runtime,
      sandbox: contained.report,
    };
    const startFailed = (e: unknown): never => {
      throw asCodedError(e, `Failed to start the subagent '${argv[0]}'`, { argv });
    };
    if (args.background) {
      const task = await ctx.launcher.launch({ ...request, background: true }).catch(startFailed);
      ctx.onTask?.(task);
      // Parity shape {task_id, status, prompt}: task_output and task_list carry the sandbox fields.
      return { task_id: task.id, status: "running", prompt: args.prompt };
    }
    const timeoutSeconds = args.timeout_seconds ?? ctx.config.task_timeout_seconds;
    const { outcome, task } = await runForeground(ctx.launcher, request, {
      timeoutMs: timeoutSeconds * 1000,
      signal: ctx.signal,
      onStart: (task) => void ctx.onTask?.(task),
    }).catch(startFailed);
    const output = runOutput(task, outputView(ctx.config, args), { keep: (t) => ctx.launcher.keepEnded(t) });
    if (outcome === "timeout") {
      throw new CodedError("TIMEOUT", `Subagent timed out after ${timeoutSeconds} seconds`, { prompt: args.prompt, timeout_seconds: timeoutSeconds, ...output, ...sandboxFields(task) });
    }
    if (outcome === "cancelled") {
      throw new CodedError("IO_ERROR", "Subagent cancelled: the request was cancelled or the server is shutting down", { prompt: args.prompt, ...output });
    }
    const exit = exitFields(task);
    return { status: exit.exit_code === 0 ? "completed" : "failed", ...exit, ...output, ...sandboxFields(task) };
  },
});
