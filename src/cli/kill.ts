import { withDaemon } from "./daemon-client.ts";
import { printJson, printOut, reportError } from "./report.ts";
import { COMMON_OPTIONS, maybeHelp, parseVerbArgs } from "./verb-args.ts";
import { HOST_OPTION, onHost } from "./host-flag.ts";
import { listAllTasks } from "./list-all-tasks.ts";

export const KILL_HELP = `Usage: agent-shell kill ID... | --all [--host NAME]

Terminate background tasks and everything they started (their whole process group:
SIGTERM, then SIGKILL after the grace period). Returns once they are gone. Killing a
task that already ended is not an error. Exit 1 if an id is unknown.

Options:
  --all              kill every running task of the daemon
  --host NAME        the tasks are on that far-side host (ID means NAME:ID)
  --json             print the kill_shell results as JSON
  --state-dir DIR    the daemon's state dir

Examples:
  agent-shell kill bg-3
  agent-shell kill --all
`;

/** `agent-shell kill ID...|--all`. */
export async function killCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("kill", argv, { ...COMMON_OPTIONS, ...HOST_OPTION, all: { type: "boolean", short: "a" }, json: { type: "boolean" } });
  if (maybeHelp(values, KILL_HELP)) return 0;
  if (values.all && positionals.length) return reportError("kill: give task ids or --all, not both", 2);
  if (!values.all && positionals.length === 0) return reportError("kill: give one or more task ids, or --all (see 'agent-shell kill --help')", 2);
  return withDaemon(values["state-dir"], async (client) => {
    let ids = positionals.map((id) => onHost(values.host, id));
    if (values.all) {
      const list = await listAllTasks(client, { status: "running", ...(values.host !== undefined ? { host: values.host as string } : {}) });
      if (list.error) return reportError(list);
      ids = (list.tasks as Array<{ task_id: string }>).map((t) => t.task_id);
    }
    const results = await Promise.all(ids.map((id) => client.call("kill_shell", { task_id: id })));
    let code = 0;
    results.forEach((r, i) => {
      if (r.error) {
        code = 1;
        if (!values.json) reportError(r);
      } else if (!values.json) {
        printOut(`${String(r.task_id ?? ids[i])} ${r.status === "killed" ? "killed" : `already ended (exit ${r.exit_code ?? "?"})`}\n`);
      }
    });
    if (values.json) printJson({ results });
    return code;
  });
}
