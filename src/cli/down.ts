import { stopOrder } from "../services/dependency-order.ts";
import { loadServicesFile, servicesFilePath } from "../services/services-file.ts";
import { withDaemon } from "./daemon-client.ts";
import { printJson, reportError } from "./report.ts";
import { COMMON_OPTIONS, maybeHelp, parseVerbArgs } from "./verb-args.ts";
import { listAllTasks } from "./list-all-tasks.ts";

export const DOWN_HELP = `Usage: agent-shell down [NAME...] [-f FILE]

Stop the services declared in agent-shell.toml (or -f FILE) in reverse dependency order:
a service stops before the services it depends on. With NAMEs, only those and the
services that depend on them. Each service's whole process group is terminated; down
returns once they are gone. Services that are not running are skipped.

Options:
  -f, --file FILE    the services file (default: ./agent-shell.toml)
  --json             print {stopped: [{name, task_id}]} as JSON
  --state-dir DIR    the daemon's state dir

Examples:
  agent-shell down
  agent-shell down web
`;

interface Entry {
  task_id: string;
  name?: string;
}

/** `agent-shell down [NAME...]`: stops declared services, dependants first. */
export async function downCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("down", argv, { ...COMMON_OPTIONS, file: { type: "string", short: "f" }, json: { type: "boolean" } });
  if (maybeHelp(values, DOWN_HELP)) return 0;
  const file = loadServicesFile(servicesFilePath(process.cwd(), values.file as string | undefined));
  const order = stopOrder(file, positionals);
  return withDaemon(values["state-dir"], async (client) => {
    const list = await listAllTasks(client, { status: "running" });
    if (list.error) return reportError(list);
    const running = list.tasks as Entry[];
    const stopped: Entry[] = [];
    let code = 0;
    for (const service of order) {
      for (const t of running.filter((r) => r.name === service.name)) {
        const r = await client.call("kill_shell", { task_id: t.task_id });
        if (r.error) {
          code = 1;
          reportError(r);
          continue;
        }
        stopped.push({ name: service.name, task_id: t.task_id });
        if (!values.json) process.stderr.write(`agent-shell: ${service.name}: stopped (${t.task_id})\n`);
      }
    }
    if (values.json) printJson({ stopped });
    return code;
  });
}
