import { checkWorkingDirectory } from "../../safety/paths.ts";
import { bringUp, serviceBashArgs } from "../../services/bring-up.ts";
import { startOrder } from "../../services/dependency-order.ts";
import { loadServicesFile, servicesFilePath } from "../../services/services-file.ts";
import { CodedError, invalidArgument, type ErrorCode, type ToolResult } from "../../errors.ts";
import type { ToolContext } from "../types.ts";

export interface DeclaredServiceArgs {
  service: string;
  working_directory?: string;
  confirmed?: boolean;
  description?: string;
}

/** Parameters that only make sense in the services file when `service` is given. */
const NOT_WITH_SERVICE = ["command", "timeout_seconds", "stdin", "host", "name", "tty", "ready_port", "ready_pattern", "ready_url"];

/**
 * `bash {service: NAME}`: starts a service declared in agent-shell.toml (in
 * working_directory, else the server's cwd) with its dependencies, in dependency order,
 * each once the ones before are ready; running ones are kept. On a failure everything
 * this call started is stopped again and the error names the service.
 */
export async function startDeclaredService(
  args: DeclaredServiceArgs & Record<string, unknown>,
  ctx: ToolContext,
  runBash: (args: Record<string, unknown>) => Promise<ToolResult>,
): Promise<ToolResult> {
  const extra = NOT_WITH_SERVICE.filter((k) => args[k] !== undefined);
  if (extra.length) {
    throw invalidArgument("bash", extra.join(", "), "not with service (the services file declares them)", { fields: extra });
  }
  const dir = checkWorkingDirectory(args.working_directory ?? ".", ctx.cwd, ctx.allowedRoots, { working_directory: args.working_directory ?? null });
  let order;
  try {
    order = startOrder(loadServicesFile(servicesFilePath(dir)), [args.service]);
  } catch (e) {
    throw invalidArgument("bash", "service", (e as Error).message, { service: args.service });
  }
  const up = await bringUp(
    order,
    async (service) => {
      let r: ToolResult;
      try {
        const bash = serviceBashArgs(service);
        // `env` of the call is the base (the CLI sends its shell's); the file's env wins.
        if (args.env !== undefined) bash.env = { ...(args.env as Record<string, string>), ...(service.env ?? {}) };
        r = await runBash({ ...bash, ...(args.confirmed ? { confirmed: true } : {}) });
      } catch (e) {
        if (e instanceof CodedError) return { error: e.toResult() };
        throw e;
      }
      if (r.error || r.needs_confirmation) return { error: r };
      return { started: r.already_running !== true, taskId: String(r.task_id) };
    },
    async (taskId) => {
      await ctx.registry.resolve(taskId)?.kill();
    },
  );
  if (up.failed) {
    const inner = up.failed.error;
    if (inner.needs_confirmation) return inner;
    throw new CodedError(
      (inner.error_code as ErrorCode | undefined) ?? "IO_ERROR",
      `Service '${up.failed.name}' failed to start: ${String(inner.error)}`,
      { service: up.failed.name, ...((inner.context as Record<string, unknown>) ?? {}) },
    );
  }
  const mine = up.services.at(-1)!;
  const task = ctx.registry.resolve(mine.task_id!);
  return {
    command: task?.info.command ?? "",
    task_id: mine.task_id,
    status: task?.status ?? "running",
    name: args.service,
    pid: task?.pid ?? null,
    ...(args.description !== undefined ? { description: args.description } : {}),
    ...(mine.already_running ? { already_running: true } : {}),
    services: up.services,
  };
}
