import type { ServiceDefinition } from "./services-file.ts";

/** What starting one service did: started it, found it running already, or failed (the result/error). */
export type StartOutcome = { started: boolean; taskId: string } | { error: Record<string, unknown> };

export interface BringUpResult {
  /** Each service in start order with its outcome, up to the first failure. */
  services: Array<{ name: string; task_id?: string; already_running?: boolean }>;
  failed?: { name: string; error: Record<string, unknown> };
}

/**
 * Starts services one after another in the given (dependency) order: each start returns
 * only once that service is ready, so every service starts after its dependencies are
 * ready. On the first failure, everything this call started is stopped again, newest
 * first, and the failure is returned: nothing it started is left running.
 */
export async function bringUp(
  order: ServiceDefinition[],
  start: (service: ServiceDefinition) => Promise<StartOutcome>,
  stop: (taskId: string) => Promise<void>,
): Promise<BringUpResult> {
  const started: string[] = [];
  const services: BringUpResult["services"] = [];
  for (const service of order) {
    const outcome = await start(service);
    if ("error" in outcome) {
      for (const id of started.reverse()) await stop(id);
      return { services, failed: { name: service.name, error: outcome.error } };
    }
    if (outcome.started) started.push(outcome.taskId);
    services.push({ name: service.name, task_id: outcome.taskId, ...(outcome.started ? {} : { already_running: true }) });
  }
  return { services };
}

/** The `bash` arguments that start one declared service in the background. */
export function serviceBashArgs(service: ServiceDefinition): Record<string, unknown> {
  const copy = ["ready_port", "ready_pattern", "ready_url", "ready_timeout_seconds", "restart_on", "max_restarts", "restart_delay_seconds", "env"] as const;
  const args: Record<string, unknown> = {
    command: service.command,
    run_in_background: true,
    name: service.name,
    working_directory: service.dir,
  };
  for (const key of copy) if (service[key] !== undefined) args[key] = service[key];
  return args;
}
