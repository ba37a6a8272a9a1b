import { withDaemon } from "./daemon-client.ts";
import { usageBySession } from "./proc-usage.ts";
import { printJson, reportError, writeAll } from "./report.ts";
import { type Cell, colourEnabled, shortDuration, table } from "./terminal.ts";
import { COMMON_OPTIONS, maybeHelp, parseVerbArgs } from "./verb-args.ts";
import { HOST_OPTION } from "./host-flag.ts";
import { listAllTasks } from "./list-all-tasks.ts";

export const PS_HELP = `Usage: agent-shell ps [--all] [--host NAME] [--json]

List the daemon's background tasks: running ones, plus those that failed or were killed
in the last 10 minutes (--all: every task still kept). Columns: id, name, status
('failed' for a non-zero exit), pid, CPU % (average since start, whole group), memory
(RSS of the whole group), uptime (or duration once ended), restarts, exit, command.

Options:
  --all              every task, also those that completed or ended long ago
  --host NAME        the tasks of that configured host (far-side hosts: ids NAME:bg-N)
  --json             print {"tasks": [...]}: task_list's fields plus cpu_percent,
                     memory_bytes and uptime_ms
  --state-dir DIR    the daemon's state dir

Examples:
  agent-shell ps
  agent-shell ps --all --json | jq -r '.tasks[] | select(.status == "running") | .task_id'
`;

/** Failed and killed tasks stay in the default listing this long after they ended. */
const RECENT_MS = 10 * 60_000;

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
  restarts?: number;
  restart_pending?: boolean;
  cpu_percent?: number;
  memory_bytes?: number;
  uptime_ms?: number;
}

/** Whether an ended task did not end well: a non-zero exit, a signal, a kill or a loss. */
function failed(t: Entry): boolean {
  return t.status === "lost" || t.status === "killed" || (t.exit_code !== undefined && t.exit_code !== 0);
}

/** The registry's status, except that a task that exited non-zero is `failed` (SPEC §13). */
function exitStatus(t: Entry): string {
  return t.status === "completed" && t.exit_code !== undefined && t.exit_code !== 0 ? "failed" : t.status;
}

/** `agent-shell ps`: the daemon's tasks as a table (or JSON), with CPU and memory of each group. */
export async function psCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("ps", argv, { ...COMMON_OPTIONS, ...HOST_OPTION, all: { type: "boolean", short: "a" }, json: { type: "boolean" } });
  if (maybeHelp(values, PS_HELP)) return 0;
  if (positionals.length) return reportError(`ps takes no arguments, got: ${positionals.join(" ")}`, 2);
  return withDaemon(values["state-dir"], async (client) => {
    const result = await listAllTasks(client, { status: "all", ...(values.host !== undefined ? { host: values.host as string } : {}) });
    if (result.error) return reportError(result);
    const now = Date.now();
    const tasks = (result.tasks as Entry[]).filter(
      (t) => values.all || t.status === "running" || t.restart_pending || (failed(t) && now - Date.parse(t.ended_at ?? t.started_at) < RECENT_MS),
    );
    const local = tasks.filter((t) => t.status === "running" && t.pid !== null && !t.host);
    const usage = usageBySession(new Set(local.map((t) => t.pid!)));
    for (const t of tasks) {
      const started = Date.parse(t.started_at);
      t.uptime_ms = (t.ended_at ? Date.parse(t.ended_at) : now) - started;
      const u = t.status === "running" && t.pid !== null ? usage.get(t.pid) : undefined;
      if (u) {
        t.cpu_percent = Math.round(u.cpuPercent * 10) / 10;
        t.memory_bytes = u.rssBytes;
      }
    }
    if (values.json) {
      printJson({ tasks: tasks.map((t) => ({ ...t, status: exitStatus(t) })) });
      return 0;
    }
    const colour = colourEnabled(process.stdout);
    const rows = tasks.map((t): Cell[] => {
      const exit = t.signal ?? (t.exit_code !== undefined ? String(t.exit_code) : "-");
      const bad = failed(t);
      const status = t.restart_pending ? "restarting" : exitStatus(t);
      return [
        { text: t.task_id },
        { text: t.name ?? "-" },
        { text: status, colour: t.status === "running" ? "green" : bad ? "red" : "dim" },
        { text: t.pid === null ? "-" : String(t.pid) },
        { text: t.cpu_percent !== undefined ? `${t.cpu_percent.toFixed(1)}%` : "-" },
        { text: t.memory_bytes !== undefined ? bytes(t.memory_bytes) : "-" },
        { text: shortDuration(t.uptime_ms ?? 0) },
        { text: String(t.restarts ?? 0) },
        { text: exit, colour: bad ? "red" : undefined },
        { text: (t.host ? `[${t.host}] ` : "") + (t.command ?? t.prompt ?? "").replaceAll("\n", " ") },
      ];
    });
    writeAll(
      1,
      new TextEncoder().encode(
        table(["ID", "NAME", "STATUS", "PID", "CPU", "MEM", "UPTIME", "RESTARTS", "EXIT", "COMMAND"], rows, {
          colour,
          width: process.stdout.isTTY ? process.stdout.columns : undefined,
        }),
      ),
    );
    if (tasks.length === 0 && process.stderr.isTTY) {
      process.stderr.write(values.all ? "(no tasks)\n" : "(no running or recently failed tasks; --all shows every one)\n");
    }
    return 0;
  });
}

function bytes(n: number): string {
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)}K`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)}M`;
  return `${(n / 1024 ** 3).toFixed(2)}G`;
}
