import { z } from "zod";
import { runForeground } from "../background/tasks/index.ts";
import { AUTODETECT_TEMPLATES, expandTemplate, resolveAgentTemplate } from "../config/agent-command.ts";
import { asCodedError, CodedError } from "../errors.ts";
import { childEnv } from "../runtime/env.ts";
import { exitFields, outputView, runOutput } from "./results/present.ts";
import { envSchema, osString, outputParameters } from "./params/schema-helpers.ts";
import { defineTool } from "./types.ts";
import { resultShapes } from "./results/result-shapes.ts";
import { requestBinding } from "../safety/confirmation/confirmations.ts";
import { callSandbox, guardSandbox, sandboxParameter } from "./sandbox/guard.ts";
import { sandboxFields } from "./sandbox/fields.ts";

/** The agent CLIs' API key variables: inherited by subagents only. */
const AGENT_KEYS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"];

/** Built at the tool's first call (defineTool). */
const schema = () =>
  z
    .object({
      prompt: osString().min(1, "must be a non-empty string").describe("The task for the subagent."),
      background: z.boolean().default(false).describe("Return a task_id at once (default: false)."),
      timeout_seconds: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("Time limit (default: 1800)."),
      env: envSchema().optional().describe("Extra variables."),
      description: z.string().optional().describe("Short note, shown in task_list."),
      sandbox: sandboxParameter(),
      ...outputParameters(),
      confirmed: z.boolean().optional().describe("true once the user approved this exact call."),
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
    "Run a subagent CLI (agent_command, else claude, codex, gemini or clemini) on `prompt`, in the sandbox. Returns: {status:" +
    " 'completed'|'failed', exit_code, stdout, stderr, sandbox, output_task_id?} | {task_id, status, prompt}",
  schema,
  result: resultSchema,
  taskSupport: "optional",
  async run(args, ctx) {
    // It starts from the user's shell as a command does (SPEC §23).
    const found = ctx.userShell();
    const shell = found instanceof Promise ? await found : found;
    const shellEnv = shell && !shell.failure ? shell.env : undefined;
    // The subagent's own API keys pass to it (it needs its login), never to `bash` commands.
    const env = childEnv(args.env, { passthrough: [...ctx.config.env_passthrough, ...AGENT_KEYS], shellEnv });
    // The CLI comes from the user's shell's or the server's own PATH: a call's env.PATH cannot swap in another `claude` (SPEC §20).
    const serverPath = shellEnv?.PATH ?? process.env.PATH ?? "";
    const template = resolveAgentTemplate(ctx.config.agent_command, serverPath);
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
    argv[0] = Bun.which(argv[0]!, { PATH: serverPath, cwd: ctx.cwd }) ?? argv[0]!;
    const sandboxed = await guardSandbox(ctx, { key: args.prompt, field: "prompt", sandbox: args.sandbox, confirmed: args.confirmed, description: args.description, binding: requestBinding("task", args), cwd: ctx.cwd });
    if ("result" in sandboxed) return sandboxed.result;
    const contained = callSandbox(ctx, sandboxed.mode, ctx.cwd, { agent: true, command: argv.join(" ") });
    const request = {
      kind: "task" as const,
      prompt: args.prompt,
      description: args.description,
      spec: { command: argv.join(" "), argv, cwd: ctx.cwd, env, stdin: null, sandbox: contained.run, plantReport: contained.report.planted, network: contained.network },
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
