import { withDaemon } from "./daemon-client.ts";
import { printJson, reportError, writeAll } from "./report.ts";

const encode = (s: string) => new TextEncoder().encode(s);
import { type Cell, colourEnabled, shortDuration, table } from "./terminal.ts";
import { COMMON_OPTIONS, maybeHelp, parseVerbArgs } from "./verb-args.ts";

export const PS_HELP = `Usage: agent-shell ps [--all] [--json]

List the daemon's background tasks: id, name, status, pid, time (age while running,
duration once finished), exit (code or signal) and command. Running tasks only,
unless --all.

Options:
  --all              include finished tasks (completed, killed, lost)
  --json             print {"tasks": [...]} as task_list returns it
  --state-dir DIR    the daemon's state dir

Examples:
  agent-shell ps
  agent-shell ps --all --json | jq -r '.tasks[] | select(.status == "running") | .task_id'
`;

interface Entry {
  task_id: string;
  name?: string;
  status: string;
  pid: number | null;
  started_at: string;
  ended_at?: string;
  exit_code?: number;
  signal?: string;
  command?: string;
  prompt?: string;
  host?: string;
}

/** `agent-shell ps`: the daemon's tasks as a table (or JSON). */
export async function psCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("ps", argv, { ...COMMON_OPTIONS, all: { type: "boolean", short: "a" }, json: { type: "boolean" } });
  if (maybeHelp(values, PS_HELP)) return 0;
  if (positionals.length) return reportError(`ps takes no arguments, got: ${positionals.join(" ")}`, 2);
  return withDaemon(values["state-dir"], async (client) => {
    const result = await client.call("task_list", { status: values.all ? "all" : "running" });
    if (result.error) return reportError(result);
    if (values.json) {
      printJson(result);
      return 0;
    }
    const tasks = result.tasks as Entry[];
    const colour = colourEnabled(process.stdout);
    const now = Date.now();
    const rows = tasks.map((t): Cell[] => {
      const started = Date.parse(t.started_at);
      const time = t.ended_at ? shortDuration(Date.parse(t.ended_at) - started) : shortDuration(now - started);
      const exit = t.signal ?? (t.exit_code !== undefined ? String(t.exit_code) : "-");
      const failed = t.status === "lost" || t.status === "killed" || (t.exit_code !== undefined && t.exit_code !== 0);
      return [
        { text: t.task_id },
        { text: t.name ?? "-" },
        { text: t.status, colour: t.status === "running" ? "green" : failed ? "red" : "dim" },
        { text: t.pid === null ? "-" : String(t.pid) },
        { text: time },
        { text: exit, colour: failed ? "red" : undefined },
        { text: (t.host ? `[${t.host}] ` : "") + (t.command ?? t.prompt ?? "").replaceAll("\n", " ") },
      ];
    });
    writeAll(
      1,
      encode(table(["ID", "NAME", "STATUS", "PID", "TIME", "EXIT", "COMMAND"], rows, {
        colour,
        width: process.stdout.isTTY ? process.stdout.columns : undefined,
      })),
    );
    if (tasks.length === 0 && process.stderr.isTTY) {
      process.stderr.write(values.all ? "(no tasks)\n" : "(no running tasks; --all shows finished ones)\n");
    }
    return 0;
  });
}
