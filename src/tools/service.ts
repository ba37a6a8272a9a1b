import { z } from "zod";
import { watchOutput } from "../background/watch/output-watch.ts";
import { awaitReadiness } from "../background/watch/readiness.ts";
import type { Task } from "../background/tasks/task.ts";
import { applyRestartPolicy } from "../background/tasks/restart-policy.ts";
import { errorResult, type ToolResult } from "./errors.ts";
import { exitFields, foregroundOutput } from "./output-fields.ts";
import { compileUserRegex } from "../safety/regex-guard.ts";
import type { ToolContext } from "./types.ts";

/** bash parameters for long-running services (background only). */
export const serviceParameters = {
  name: z
    .string()
    .min(1)
    .optional()
    .describe("Service name (background only): while a task of this name runs, the same call returns it (already_running: true) instead of starting a duplicate."),
  ready_pattern: z.string().min(1).optional().describe("Background only: return once an output line matches this regex (ready: true)."),
  ready_port: z.number().int().min(1).max(65535).optional().describe("Background only: return once this TCP port accepts connections (ready: true)."),
  ready_url: z
    .string()
    .regex(/^https?:\/\//i, "must be an http:// or https:// URL")
    .optional()
    .describe("Background only: return once a GET of this URL answers 2xx or 3xx (ready: true)."),
  restart_on: z
    .enum(["failure", "always"])
    .optional()
    .describe("Background only: when the task exits on its own (non-zero exit, or any exit), start it again in place, same id. A kill never restarts. (default: never)"),
  max_restarts: z.number().int().min(0).max(1_000_000).optional().describe("With restart_on: at most this many automatic restarts. (default: unlimited)"),
  restart_delay_seconds: z
    .number()
    .min(0)
    .max(3600)
    .optional()
    .describe("With restart_on: seconds before a restart; doubled after each quick failure, up to 30. (default: 1)"),
  ready_timeout_seconds: z
    .number()
    .positive()
    .optional()
    .describe("How long to wait for readiness; on expiry the task is killed and TIMEOUT returned. (default: 60)"),
  notify_pattern: z
    .string()
    .min(1)
    .optional()
    .describe("Background only: output lines matching this regex are sent as notifications/message {event: 'task_output_matched', task_id, lines} (at most one per second)."),
};

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

/** Validates the service parameters; the compiled regexes, or the error to return. */
export function compileService(args: ServiceArgs): CompiledService | ToolResult {
  const backgroundOnly = (
    ["name", "ready_pattern", "ready_port", "ready_url", "ready_timeout_seconds", "notify_pattern", "restart_on", "max_restarts", "restart_delay_seconds"] as const
  ).filter(
    (k) => args[k] !== undefined,
  );
  if (backgroundOnly.length && !args.run_in_background) {
    return errorResult("INVALID_ARGUMENT", `Invalid arguments for bash: ${backgroundOnly.join(", ")}: only with run_in_background: true`, {
      fields: backgroundOnly,
    });
  }
  const out: CompiledService = {};
  for (const [field, key] of [
    ["ready_pattern", "ready"],
    ["notify_pattern", "notify"],
  ] as const) {
    const source = args[field];
    if (source === undefined) continue;
    const compiled = compileUserRegex(source);
    if (typeof compiled === "string") {
      return errorResult("INVALID_ARGUMENT", `Invalid arguments for bash: ${field}: ${compiled}`, { [field]: source });
    }
    out[key] = compiled;
  }
  return out;
}

/** The running task of this name, as the result a duplicate start returns. */
export function existingService(ctx: ToolContext, name: string | undefined): ToolResult | null {
  if (name === undefined) return null;
  const task = ctx.registry.findRunningByName(name);
  if (!task) return null;
  return { command: task.command, task_id: task.id, status: "running", name, pid: task.pid, already_running: true };
}

/** Sets up watches and waits for readiness; the extra result fields, or the error (with the task killed). */
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
    (port) => (task.host !== undefined ? ctx.runtimeFor(task.host) : ctx.runtime).portOpen(port),
    ctx.signal,
  );
  if (readiness.outcome === "ready") return { ready: true, ready_after_ms: readiness.afterMs };
  await task.kill(); // also cancels a restart its policy may have scheduled
  await task.ended;
  const context = { command: args.command, task_id: task.id, ...exitFields(task), ...foregroundOutput(task, ctx.config.max_output_bytes) };
  if (readiness.outcome === "timeout") {
    const what = [service.ready ? `no output line matched ready_pattern '${args.ready_pattern}'` : "", args.ready_port ? `port ${args.ready_port} did not accept connections` : "", args.ready_url ? `GET ${args.ready_url} did not answer 2xx/3xx` : ""]
      .filter(Boolean)
      .join(" and ");
    return errorResult("TIMEOUT", `Service not ready after ${timeoutSeconds} seconds (${what}); it was killed`, context);
  }
  if (readiness.outcome === "aborted") return errorResult("IO_ERROR", "Cancelled while waiting for readiness; the service was killed", context);
  return errorResult(
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
