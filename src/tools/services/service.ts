import { z } from "zod";
import type { Task } from "../../background/tasks/index.ts";
import { awaitReadiness, watchOutput } from "../../background/watch/index.ts";
import { CodedError, invalidArgument, type ToolResult } from "../../errors.ts";
import { exitFields, outputView, runOutput } from "../results/present.ts";
import { userRegex } from "../params/schema-helpers.ts";
import type { ToolContext } from "../types.ts";
import { applyRestartPolicy } from "../../background/tasks/restart-policy.ts";

/** bash parameters for long-running services (background only). */
export const serviceParameters = () => ({
  name: z
    .string()
    .min(1)
    .optional()
    .describe("Service name; never started twice."),
  ready_pattern: z.string().min(1).optional().describe("Return once output matches."),
  ready_port: z.number().int().min(1).max(65535).optional().describe("Return once this port listens."),
  ready_url: z
    .string()
    .regex(/^https?:\/\//i, "must be an http:// or https:// URL")
    .optional()
    .describe("Return once a GET succeeds."),
  restart_on: z
    .enum(["failure", "always"])
    .optional()
    .describe("Restart when it exits."),
  max_restarts: z.number().int().min(0).max(1_000_000).optional().describe("Restart limit."),
  restart_delay_seconds: z
    .number()
    .min(0)
    .max(3600)
    .optional()
    .describe("Delay before a restart."),
  ready_timeout_seconds: z
    .number()
    .positive()
    .optional()
    .describe("Readiness limit (default: 60)."),
  notify_pattern: z
    .string()
    .min(1)
    .optional()
    .describe("Notify matching lines."),
});

export interface ServiceArgs {
  command: string;
  run_in_background?: boolean;
  name?: string;
  ready_pattern?: string;
  ready_port?: number;
  ready_url?: string;
  ready_timeout_seconds?: number;
  notify_pattern?: string;
  restart_on?: "failure" | "always";
  max_restarts?: number;
  restart_delay_seconds?: number;
}

export interface CompiledService {
  ready?: RegExp;
  notify?: RegExp;
}

/** Validates the service parameters; the compiled regexes (INVALID_ARGUMENT when they are misused). */
export function compileService(args: ServiceArgs): CompiledService {
  const backgroundOnly = (
    ["name", "ready_pattern", "ready_port", "ready_url", "ready_timeout_seconds", "notify_pattern", "restart_on", "max_restarts", "restart_delay_seconds"] as const
  ).filter(
    (k) => args[k] !== undefined,
  );
  if (backgroundOnly.length && !args.run_in_background) {
    throw invalidArgument("bash", backgroundOnly.join(", "), "only with run_in_background: true", { fields: backgroundOnly });
  }
  return {
    ready: args.ready_pattern !== undefined ? userRegex("bash", "ready_pattern", args.ready_pattern) : undefined,
    notify: args.notify_pattern !== undefined ? userRegex("bash", "notify_pattern", args.notify_pattern) : undefined,
  };
}

/** The running task of this name, as the result a duplicate start returns. */
export function existingService(ctx: ToolContext, name: string | undefined): ToolResult | null {
  if (name === undefined) return null;
  const task = ctx.registry.findRunningByName(name);
  if (!task) return null;
  return { command: task.info.command, task_id: task.id, status: "running", name, pid: task.pid, already_running: true };
}

/** Sets up watches and waits for readiness; the extra result fields. On failure the task is killed and the error thrown. */
export async function startService(task: Task, args: ServiceArgs, service: CompiledService, ctx: ToolContext): Promise<ToolResult> {
  if (service.notify) {
    watchOutput(task, service.notify, (lines) => ctx.registry.notice({ event: "task_output_matched", task_id: task.id, lines }), {
      intervalMs: 1000,
      maxNotices: ctx.config.max_notifications,
    });
  }
  if (!service.ready && args.ready_port === undefined && args.ready_url === undefined) return {};
  const timeoutSeconds = args.ready_timeout_seconds ?? 60;
  const readiness = await awaitReadiness(
    task,
    { pattern: service.ready, port: args.ready_port, url: args.ready_url, timeoutMs: timeoutSeconds * 1000 },
    // ready_port is checked where the task runs (on its SSH host for a remote task).
    (port) => (task.info.host !== undefined ? ctx.runtimeFor(task.info.host) : ctx.runtime).portOpen(port),
    ctx.signal,
  );
  if (readiness.outcome === "ready") return { ready: true, ready_after_ms: readiness.afterMs };
  await task.kill(); // also cancels a restart its policy may have scheduled
  await task.ended;
  const context = { command: args.command, task_id: task.id, ...exitFields(task), ...runOutput(task, outputView(ctx.config, {})) };
  if (readiness.outcome === "timeout") {
    const what = [service.ready ? `no output line matched ready_pattern '${args.ready_pattern}'` : "", args.ready_port ? `port ${args.ready_port} did not accept connections` : "", args.ready_url ? `GET ${args.ready_url} did not answer 2xx/3xx` : ""]
      .filter(Boolean)
      .join(" and ");
    throw new CodedError("TIMEOUT", `Service not ready after ${timeoutSeconds} seconds (${what}); it was killed`, context);
  }
  if (readiness.outcome === "aborted") throw new CodedError("IO_ERROR", "Cancelled while waiting for readiness; the service was killed", context);
  throw new CodedError(
    "IO_ERROR",
    `Command exited before becoming ready (exit code ${task.exitCode ?? "unknown"}${task.exit?.signal ? `, ${task.exit.signal}` : ""})`,
    context,
  );
}

/** Remembers how a background service was started (a restart replays its readiness) and arms its restart policy. */
export function armService(task: Task, args: ServiceArgs, ctx: ToolContext): void {
  const { name, ready_pattern, ready_port, ready_url, ready_timeout_seconds, restart_on, max_restarts, restart_delay_seconds } = args;
  task.serviceArgs = { command: args.command, name, ready_pattern, ready_port, ready_url, ready_timeout_seconds };
  if (restart_on === undefined) return;
  const policy = { on: restart_on, maxRestarts: max_restarts, delayMs: (restart_delay_seconds ?? 1) * 1000 };
  task.restartPolicy = policy;
  applyRestartPolicy(task, policy, (t) => ctx.launcher.relaunch(t));
}
