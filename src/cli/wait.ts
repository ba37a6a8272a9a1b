import { withDaemon } from "./daemon-client.ts";
import { printOutputTail } from "./output-tail.ts";
import { exitStatus, printJson, reportError } from "./report.ts";
import { shortDuration, Spinner } from "./terminal.ts";
import { COMMON_OPTIONS, maybeHelp, parseVerbArgs, secondsOption } from "./verb-args.ts";
import { HOST_OPTION, onHost } from "./host-flag.ts";

export const WAIT_HELP = `Usage: agent-shell wait ID... [--timeout S] [--host NAME]

Wait until every given task has ended. Exit 0 if each exited 0; otherwise the exit code of
the first listed task that did not (128+N if signal N ended it, 1 if it was lost);
124 if --timeout passes first. Returns the moment the last task ends. On a terminal, a
spinner shows the elapsed time.

Options:
  --timeout S        give up after S seconds (fractions allowed; default: wait forever)
  --host NAME        the tasks are on that far-side host (ID means NAME:ID)
  --json             print the tasks' final status as JSON
  --state-dir DIR    the daemon's state dir

Examples:
  agent-shell wait bg-4
  agent-shell wait --timeout 600 "$build" "$tests" || echo "failed or timed out: $?"
`;

/** Server-side wait per request; the loop goes on until the tasks end or our own deadline. */
const CHUNK_SECONDS = 30;

interface Status {
  task_id: string;
  status: string;
  exit_code?: number;
  signal?: string;
  duration_ms?: number;
}

/** `agent-shell wait ID...`: event-driven (the daemon answers the moment the tasks end). */
export async function waitCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("wait", argv, { ...COMMON_OPTIONS, ...HOST_OPTION, timeout: { type: "string" }, json: { type: "boolean" } });
  if (maybeHelp(values, WAIT_HELP)) return 0;
  if (positionals.length === 0) return reportError("wait: give one or more task ids (see 'agent-shell wait --help')", 2);
  const timeout = secondsOption("wait", "timeout", values.timeout);
  const deadline = timeout === undefined ? Infinity : performance.now() + timeout * 1000;
  const ids = [...new Set(positionals.map((id) => onHost(values.host, id)))];
  return withDaemon(values["state-dir"], async (client) => {
    const spinner = new Spinner(`waiting for ${ids.join(" ")}`).start();
    try {
      let results: Status[] = [];
      while (true) {
        const left = deadline - performance.now();
        const timedOut = left <= 0;
        const chunk = timedOut ? 0 : Math.min(CHUNK_SECONDS, Math.ceil(left / 1000));
        // A range read of zero bytes: status only, and the tasks' read cursors stay where they are.
        const args = { task_ids: ids, until: "all", wait: chunk > 0, timeout: chunk, offset: 0, length: 0 };
        const signal = Number.isFinite(left) && left > 0 ? AbortSignal.timeout(left) : undefined;
        let r;
        try {
          r = await client.call("task_output", args, (chunk + 30) * 1000, signal);
        } catch (e) {
          if (signal?.aborted) continue; // our deadline: one last status read above
          throw e;
        }
        if (r.error) {
          spinner.stop();
          return reportError(r);
        }
        results = r.results as Status[];
        if (results.every((t) => t.status !== "running")) break;
        if (timedOut) {
          spinner.stop();
          if (values.json) printJson({ results, timed_out: true });
          const running = results.filter((t) => t.status === "running").map((t) => t.task_id);
          reportError(`wait: timed out after ${timeout} s; still running: ${running.join(" ")}`);
          return 124;
        }
      }
      spinner.stop();
      if (values.json) printJson({ results, timed_out: false });
      else if (process.stderr.isTTY) {
        for (const t of results) {
          const how = t.signal ?? `exit ${t.exit_code ?? "?"}`;
          process.stderr.write(`${t.task_id} ${t.status} (${how}) after ${shortDuration(t.duration_ms ?? 0)}\n`);
        }
      }
      const failed = results.find((t) => t.status === "lost" || t.exit_code !== 0);
      // A failure says why on stderr, TTY or not: its exit status and the end of its output.
      for (const t of results.filter((r) => r.status === "lost" || r.exit_code !== 0)) {
        if (values.json) break;
        const how = t.signal ? `killed by ${t.signal}` : t.status === "lost" ? "lost" : `exit code ${t.exit_code}`;
        if (!process.stderr.isTTY) process.stderr.write(`agent-shell: ${t.task_id} failed (${how})\n`);
        const tail = await client.call("task_output", { task_id: t.task_id, offset: 0, length: 0 }).then(async (info) => {
          const last = (stream: "stdout" | "stderr") => {
            const total = Number(info[`${stream}_total_bytes`] ?? 0);
            const offset = Math.max(0, total - 64 * 1024); // 20 lines live in the last 64 KiB, or are cut short anyway
            return client.call("task_output", { task_id: t.task_id, stream, offset, length: total - offset, tail_lines: 20, max_bytes: 1_000_000 });
          };
          const [out, err] = await Promise.all([last("stdout"), last("stderr")]);
          return { stdout: out.stdout, stderr: err.stderr };
        });
        printOutputTail(tail);
      }
      return failed ? exitStatus(failed) : 0;
    } finally {
      spinner.stop();
    }
  });
}
