import { bringUp, serviceBashArgs } from "../services/bring-up.ts";
import { startOrder } from "../services/dependency-order.ts";
import { loadServicesFile, servicesFilePath } from "../services/services-file.ts";
import { callConfirmed } from "./confirm.ts";
import { withDaemon } from "./daemon-client.ts";
import { forwardedEnv } from "./forwarded-env.ts";
import { printJson, reportError } from "./report.ts";
import { printOutputTail } from "./output-tail.ts";
import { COMMON_OPTIONS, maybeHelp, parseVerbArgs } from "./verb-args.ts";

export const UP_HELP = `Usage: agent-shell up [NAME...] [-f FILE]

Start the services declared in agent-shell.toml (in the current directory, or -f FILE),
or only the NAMEd ones and what they depend on, in dependency order: each starts once the
services it depends on are ready. Services already running are kept (up is idempotent).
If one fails to start or become ready, up exits non-zero naming it with the end of its
output, and stops everything it started: nothing it started is left running.

The file:
  [services.db]
  command = "postgres -D ./data"
  ready_port = 5432
  [services.web]
  command = "npm run dev"
  depends_on = ["db"]
  ready_url = "http://127.0.0.1:3000/health"
  env = { PORT = "3000" }
  restart_on = "failure"        # or "always"; max_restarts, restart_delay_seconds

Keys: command, cwd (relative to the file), env, depends_on, ready_port, ready_pattern,
ready_url, ready_timeout_seconds (default 60), restart_on, max_restarts,
restart_delay_seconds.

Options:
  -f, --file FILE    the services file (default: ./agent-shell.toml)
  --yes              start commands that need confirmation without asking
  --json             print {services: [{name, task_id, already_running?}]} as JSON
  --state-dir DIR    the daemon's state dir

Examples:
  agent-shell up && npm test; agent-shell down
  agent-shell up web
`;

/** `agent-shell up [NAME...]`: the services file's services, started in dependency order. */
export async function upCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("up", argv, {
    ...COMMON_OPTIONS,
    file: { type: "string", short: "f" },
    yes: { type: "boolean" },
    json: { type: "boolean" },
  });
  if (maybeHelp(values, UP_HELP)) return 0;
  const file = loadServicesFile(servicesFilePath(process.cwd(), values.file as string | undefined));
  const order = startOrder(file, positionals);
  const env = forwardedEnv();
  return withDaemon(values["state-dir"], async (client) => {
    const up = await bringUp(
      order,
      async (service) => {
        const args = serviceBashArgs(service);
        args.env = { ...env, ...(service.env ?? {}) };
        const waitMs = ((service.ready_timeout_seconds ?? 60) + 60) * 1000;
        const r = await callConfirmed(client, "bash", args, values.yes === true, waitMs);
        if (r.error || r.needs_confirmation) return { error: r };
        if (!values.json) {
          const how = r.already_running ? "already running" : r.ready ? `ready after ${r.ready_after_ms} ms` : "started";
          process.stderr.write(`agent-shell: ${service.name}: ${how} (${r.task_id}, pid ${r.pid})\n`);
        }
        return { started: r.already_running !== true, taskId: String(r.task_id) };
      },
      async (taskId) => {
        await client.call("kill_shell", { task_id: taskId });
      },
    );
    if (values.json) printJson(up);
    if (!up.failed) return 0;
    const { name, error } = up.failed;
    if (!values.json) {
      reportError(`service '${name}' failed to start: ${error.error ? String(error.error) : "it needs confirmation (use --yes)"}`);
      printOutputTail((error.context ?? {}) as Record<string, unknown>);
      const stopped = up.services.filter((s) => !s.already_running).map((s) => s.name);
      if (stopped.length) process.stderr.write(`agent-shell: stopped again what this 'up' started: ${stopped.join(", ")}\n`);
    }
    return error.error_code === "TIMEOUT" ? 124 : 1;
  });
}
