import { z } from "zod";
import { runForeground } from "../background/tasks/index.ts";
import { onWaitingForInput, startProgress } from "../background/watch/index.ts";
import { asCodedError, CodedError, invalidArgument } from "../errors.ts";
import { AGENT_ENV, childEnv, remoteEnv } from "../runtime/env.ts";
import { type ShellSnapshot, snapshotNote } from "../runtime/shell-snapshot/shell-snapshot.ts";
import { preludeFile, SESSION_OUT } from "../runtime/shell-snapshot/shell-prelude.ts";
import type { SessionCall } from "./sessions.ts";
import { handOver, keepsRunningNote } from "./answer-by.ts";
import type { ToolContext } from "./types.ts";
import { confirmCommand } from "../safety/confirmation/command-guard.ts";
import { requestBinding } from "../safety/confirmation/confirmations.ts";
import { checkWorkingDirectory } from "../safety/paths.ts";
import { commandLengthProblem } from "../safety/command-length.ts";
import { checkInteractive, interactiveParameters } from "./params/interactive-params.ts";
import { exitStatusFields, interactiveFields, outputView, pidFields, runOutput, screenText } from "./results/present.ts";
import { remoteTarget } from "./params/remote.ts";
import { armService, compileService, existingService, serviceParameters, startService } from "./services/service.ts";
import { startDeclaredService } from "./services/declared-service.ts";
import { envSchema, osString, outputParameters } from "./params/schema-helpers.ts";
import { defineTool } from "./types.ts";
import type { ToolResult } from "../errors.ts";
import { callSandbox, guardSandbox, refusePrivileged, sandboxParameter } from "./sandbox/guard.ts";
import { sandboxFields } from "./sandbox/fields.ts";
import { sandboxStartFailure } from "./sandbox/start.ts";
import { resultShapes } from "./results/result-shapes.ts";

/** Built at the tool's first call (defineTool). */
const schema = () =>
  z
    .object({
      command: osString()
        .min(1, "must be a non-empty string")
        .optional()
        .describe("For `bash -c`. Required unless `service` is given."),
      service: z
        .string()
        .min(1)
        .optional()
        .describe("Start this agent-shell.toml service instead."),
      description: z.string().optional().describe("Echoed in results."),
      timeout_seconds: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("Time limit (default: 120)."),
      confirmed: z
        .boolean()
        .default(false)
        .describe("true once the user approved this exact call (default: false)."),
      working_directory: osString()
        .optional()
        .describe("Where to run (default: cwd)."),
      run_in_background: z
        .boolean()
        .default(false)
        .describe("Return a task_id at once (default: false)."),
      env: envSchema().optional().describe("Extra variables."),
      // A name (its length is checked at the call: each schema word costs every model's context).
      session: z.string().optional().describe("cd and exports persist."),
      stdin: z.string().optional().describe("Text for stdin."),
      host: z
        .string()
        .min(1)
        .optional()
        .describe("Host."),
      sandbox: sandboxParameter(),
      ...outputParameters(),
      ...serviceParameters(),
      ...interactiveParameters(),
    })
    .strict()
    .superRefine((v, issue) => {
      // `command` is required, unless a declared service is started instead.
      if (v.command === undefined && v.service === undefined) {
        issue.addIssue({ code: "invalid_type", expected: "string", input: undefined, path: ["command"], message: "expected string, received undefined" });
      }
    });

/** The result schema (its MCP outputSchema), built on demand: see result-shapes.ts. */
function resultSchema(): z.ZodType {
  const { interactiveShape, needsConfirmation, taskStatus, runOutputShape, sandboxShape, streamShape } = resultShapes();
  const processList = { pids: z.array(z.number().int()), commands: z.array(z.string()), sandbox_pids: z.array(z.number().int()).optional() };
  const foregroundResult = z.looseObject({
    command: z.string(),
    exit_code: z.number().int(),
    ...runOutputShape,
    success: z.boolean(),
    signal: z.string().optional(),
    duration_ms: z.number(),
    description: z.string().optional(),
    screen: z.string().optional(),
    notes: z.array(z.string()).optional(),
    /** Processes the command left running, kept as this background task (config foreground_leftovers = "adopt"). */
    left_running: z.looseObject({ task_id: z.string(), ...processList }).optional(),
    /** Processes the command left running, ended (foreground_leftovers = "kill"). */
    left_running_killed: z.looseObject(processList).optional(),
    ...sandboxShape,
  });

  /** Started in the background: at once, after readiness, moved there by background_after_seconds, or an already running service. */
  const backgroundResult = z.looseObject({
    command: z.string(),
    task_id: z.string(),
    status: taskStatus,
    pid: z.number().int().nullable().optional(),
    sandbox_pid: z.number().int().optional(),
    name: z.string().optional(),
    description: z.string().optional(),
    ready: z.boolean().optional(),
    ready_after_ms: z.number().optional(),
    already_running: z.boolean().optional(),
    backgrounded: z.boolean().optional(),
    notes: z.array(z.string()).optional(),
    stdout: z.string().optional(),
    stderr: z.string().optional(),
    ...streamShape,
    ...interactiveShape,
    ...sandboxShape,
  });

  return z.union([foregroundResult, backgroundResult, needsConfirmation]);
}

export const bashTool = defineTool({
  name: "bash",
  title: "Run a shell command",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  description:
    "Run a command in an OS sandbox (writes only in workspace, temp, caches); a timeout kills all it started. Lon" +
    "g output keeps errors, tail and head; each omission is one '[… N lines truncated (bytes A-B of T total) …]' line: task_o" +
    "utput {task_id: output_task_id, stream, offset: A, length: B-A} reads it. Destructive commands ask the user or return n" +
    "eeds_confirmation (repeat with confirmed: true). Returns: {command, exit_code, stdout, stderr, succ" +
    "ess, duration_ms, sandbox, sandbox_denied?, description?, output_task_id?, git_disarmed?, left_running?} | {task_id, status, pid} | {needs_confirmation, message}",
  schema,
  result: resultSchema,
  taskSupport: "optional",
  async run(input, ctx): Promise<ToolResult> {
    if (input.service !== undefined) {
      return startDeclaredService({ ...input, service: input.service }, ctx, (a): Promise<ToolResult> => bashTool.run(a as typeof input, ctx));
    }
    const args = { ...input, command: input.command ?? "" };
    // A confirmation is for this whole request: any other argument and it no longer applies.
    const binding = requestBinding("bash", input);
    const remote = args.host !== undefined ? remoteTarget(ctx, args.host, args.working_directory, { command: args.command }) : null;
    // Bad parameters fail before the safety checks, so they never use up a confirmation.
    const service = compileService(args);
    checkInteractive(args);
    const context = { command: args.command, description: args.description ?? null };
    const tooLong = commandLengthProblem(args.command);
    if (tooLong) throw invalidArgument("bash", "command", tooLong, context);
    if (args.session !== undefined && !/^[\w.-]{1,64}$/.test(args.session)) throw invalidArgument("bash", "session", "must be 1-64 letters, digits, '_', '.' or '-'", context);
    if (remote && args.session !== undefined) throw invalidArgument("bash", "session", "sessions hold local commands only: leave out `session` with `host`", context);
    const session = args.session !== undefined ? ctx.sessions.begin(args.session) : null;
    let cwd = remote ? remote.cwd : ctx.cwd;
    if (!remote && args.working_directory !== undefined) {
      cwd = checkWorkingDirectory(args.working_directory, ctx.cwd, ctx.allowedRoots, { ...context, working_directory: args.working_directory });
    } else if (session?.cwd) {
      cwd = sessionDirectory(ctx, args.session!, session.cwd, context);
    }
    // Local commands run in the OS sandbox; asking for a looser one is confirmed first.
    const sandboxed = remote
      ? null
      : await guardSandbox(ctx, { key: args.command, field: "command", sandbox: args.sandbox, confirmed: args.confirmed, description: args.description, binding, cwd });
    if (sandboxed && "result" in sandboxed) return sandboxed.result;
    if (sandboxed) refusePrivileged(ctx, sandboxed.mode, args.command);
    const alreadyConfirmed = sandboxed?.alreadyConfirmed === true;
    const confirmation = await confirmCommand({ ...args, binding, cwd, alreadyConfirmed, rules: ctx.rules(), note: ctx.note }, ctx.confirmationPolicy, ctx.confirmations);
    if (confirmation) return confirmation;
    const contained = sandboxed ? callSandbox(ctx, sandboxed.mode, cwd, { command: args.command }) : { run: undefined, report: { mode: "remote" }, network: undefined };
    const background = args.run_in_background;
    const existing = existingService(ctx, args.name);
    if (existing) return existing;
    const notes: string[] = [];
    // Waited for only while the user's shell is still starting: else no turn of the event loop is lost.
    const shell = remote ? null : ctx.userShell();
    const env = remote ? remoteEnv(args.env) : localEnv(ctx, args, session, notes, shell instanceof Promise ? await shell : shell);
    const noted = notes.length ? { notes } : {};
    const request = {
      kind: "bash" as const,
      command: args.command,
      description: args.description,
      host: args.host,
      name: args.name,
      runtime: remote ? remote.runtime : ctx.runtime,
      sandbox: contained.report,
      spec: {
        command: args.command,
        cwd,
        env,
        stdin: args.stdin !== undefined ? { text: args.stdin } : args.keep_stdin_open ? ("pipe" as const) : null,
        tty: args.tty ? { cols: args.cols ?? 120, rows: args.rows ?? 30 } : undefined,
        durable: background,
        sandbox: contained.run,
        plantReport: contained.report.planted,
        network: contained.network,
      },
    };
    const startFailed = (e: unknown): never => {
      throw asCodedError(e, "Failed to start the command", { command: args.command });
    };
    const described = args.description !== undefined ? { description: args.description } : {};
    // A session takes in where its command ended: at once for a foreground end, else when it ends.
    const finishSession = () => session?.finish(env);
    if (background) {
      const task = await ctx.launcher.launch({ ...request, background: true }).catch(startFailed);
      void task.ended.then(finishSession);
      ctx.onTask?.(task);
      armService(task, args, ctx);
      const started = await startService(task, args, service, ctx);
      const named = args.name !== undefined ? { name: args.name } : {};
      return { command: args.command, task_id: task.id, status: "running", ...described, ...named, ...pidFields(task), ...started, ...interactiveFields(task), ...sandboxFields(task), ...noted };
    }
    const timeoutSeconds = args.timeout_seconds ?? ctx.config.timeout_seconds;
    const handover = handOver(ctx, timeoutSeconds * 1000, args.background_after_seconds !== undefined ? args.background_after_seconds * 1000 : undefined);
    const { outcome, task, leftovers } = await runForeground(ctx.launcher, request, {
      timeoutMs: timeoutSeconds * 1000,
      leftovers: ctx.config.foreground_leftovers,
      signal: ctx.signal,
      backgroundAfterMs: handover.afterMs,
      // A terminal program stopped at a prompt would wait for the agent forever: hand it over.
      backgroundWhen: args.tty ? onWaitingForInput : undefined,
      onStart: (task) => {
        ctx.onTask?.(task);
        return ctx.progress ? startProgress(task, ctx.progress) : undefined;
      },
    }).catch(startFailed);
    const view = outputView(ctx.config, args);
    if (outcome === "backgrounded") {
      void task.ended.then(finishSession);
      if (handover.byCaller) notes.push(keepsRunningNote(task.id));
      const output = runOutput(task, view, { markRead: true });
      return { command: args.command, task_id: task.id, status: task.status, backgrounded: true, ...output, ...described, ...pidFields(task), ...interactiveFields(task, view), ...sandboxFields(task), ...(notes.length ? { notes } : {}) };
    }
    finishSession();
    // Processes the command left running go on as a background task: its task_output goes on after this.
    const adopted = outcome === "left_running";
    const output = adopted ? runOutput(task, view, { markRead: true }) : runOutput(task, view, { keep: (t) => ctx.launcher.keepEnded(t) });
    if (outcome === "timeout") {
      throw new CodedError("TIMEOUT", `Command timed out after ${timeoutSeconds} seconds`, { ...context, timeout_seconds: timeoutSeconds, ...output, ...sandboxFields(task), ...noted });
    }
    if (outcome === "cancelled") {
      throw new CodedError("IO_ERROR", "Command cancelled: the request was cancelled or the server is shutting down", { command: args.command, ...output });
    }
    if (task.status === "lost") throw new CodedError("IO_ERROR", `Command lost: ${task.lostReason}`, { command: args.command, ...output });
    const command = task.commandExit!; // the command itself ended (the task's end may be to come)
    const exit = exitStatusFields(command.status);
    const notStarted = task.sandbox?.level ? sandboxStartFailure(exit.exit_code, output) : null;
    if (notStarted) throw new CodedError(notStarted.code, notStarted.message, { command: args.command, working_directory: cwd });
    return {
      command: args.command,
      exit_code: exit.exit_code,
      ...output,
      success: exit.exit_code === 0,
      ...(exit.signal ? { signal: exit.signal } : {}),
      ...described,
      duration_ms: adopted ? command.durationMs : task.durationMs,
      ...(task.terminal ? { screen: screenText(task, view) } : {}),
      ...(adopted ? { left_running: { task_id: task.id!, ...leftovers! } } : leftovers ? { left_running_killed: leftovers } : {}),
      ...sandboxFields(task),
      ...noted,
    };
  },
});

/** The directory a session's command runs in: where its last one ended, checked as any working directory is. */
function sessionDirectory(ctx: ToolContext, name: string, dir: string, context: Record<string, unknown>): string {
  try {
    return checkWorkingDirectory(dir, ctx.cwd, ctx.allowedRoots, { ...context, session: name });
  } catch (e) {
    const err = asCodedError(e, "session directory", {});
    throw new CodedError(err.code, `session '${name}' is in ${dir}, where no command may run now: ${err.message}. Give working_directory to move the session.`, { ...context, session: name });
  }
}

/**
 * A local command's environment (SPEC §23): the user's shell's exports, then the server's,
 * then the session's, then the call's `env`; with BASH_ENV naming the prelude when there is
 * something to define first (the user's aliases and functions, a session's end-state trap).
 */
function localEnv(
  ctx: ToolContext,
  args: { tty?: boolean; env?: Record<string, string> },
  session: SessionCall | null,
  notes: string[],
  shell: ShellSnapshot | null,
): Record<string, string> {
  const note = snapshotNote(shell);
  if (note) notes.push(note);
  const agent = ctx.config.agent_env ? AGENT_ENV : undefined;
  const extra = args.tty ? { ...agent, TERM: "xterm-256color" } : agent;
  const overrides = session ? { ...session.env, ...args.env } : args.env;
  let env = childEnv(overrides, { passthrough: ctx.config.env_passthrough, extra, shellEnv: shell && !shell.failure ? shell.env : undefined });
  const definitions = shell && !shell.failure ? shell.definitions : "";
  if (!session && !definitions) return env;
  env = { ...env };
  for (const name of session?.unset ?? []) if (!args.env || !(name in args.env)) delete env[name];
  try {
    env.BASH_ENV = preludeFile(definitions, env.BASH_ENV);
    if (session) env[SESSION_OUT] = session.out;
  } catch (e) {
    notes.push(`Your shell's aliases and functions${session ? " and this session's state" : ""} are not available: ${(e as Error).message}`);
  }
  return env;
}
