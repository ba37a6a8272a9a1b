import { closeSync, openSync, readSync } from "node:fs";
import type { ToolResult } from "../errors.ts";
import type { DaemonClient } from "./daemon-client.ts";
import { withDaemon } from "./daemon-client.ts";
import { printJson, reportError, writeAll } from "./report.ts";
import { MergedLog, type MergedLine } from "./merged-log.ts";
import { colourEnabled, paint } from "./terminal.ts";
import { COMMON_OPTIONS, intOption, maybeHelp, parseVerbArgs } from "./verb-args.ts";
import { HOST_OPTION, onHost } from "./host-flag.ts";

export const LOGS_HELP = `Usage: agent-shell logs NAME|ID [--follow] [--tail N] [--stdout|--stderr] [--timestamps] [--host NAME]

Print a background task's output: stdout and stderr merged in the order the task wrote
them (stderr lines in red on a terminal), from its log files. A name means its newest
task. Reading logs does not move the task's read cursor (an agent's task_output only_new
still sees everything).

Options:
  -f, --follow       keep printing new lines as they are written; ends when the task ends.
                     Starts from the last 10 lines (--tail N, or --all for the whole log)
  -n, --tail N       start with the last N lines only
  --all              with --follow: start from the beginning
  --stdout           only stdout, byte for byte
  --stderr           only stderr, byte for byte
  -t, --timestamps   prefix each line with the time it was written (ISO 8601)
  --json             print {task_id, status, stdout|stderr, exit_code?} (not with --follow)
  --host NAME        the task is on that far-side host (ID means NAME:ID); its log files
                     are there, so stdout and stderr are read apart (--stdout by default)
  --state-dir DIR    the daemon's state dir

Examples:
  agent-shell logs web
  agent-shell logs --follow --timestamps web
  agent-shell logs --stderr bg-2 | grep -i error
`;

/** Bytes per range read (task_output's max_bytes ceiling). */
const RANGE = 1_000_000;
/** Long-poll length; the daemon answers earlier on any news. */
const POLL_MS = 30_000;

/** `agent-shell logs ID`: the output so far, then (with --follow) each chunk as it arrives. */
export async function logsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("logs", argv, {
    ...COMMON_OPTIONS,
    ...HOST_OPTION,
    follow: { type: "boolean", short: "f" },
    tail: { type: "string", short: "n" },
    stderr: { type: "boolean" },
    stdout: { type: "boolean" },
    timestamps: { type: "boolean", short: "t" },
    all: { type: "boolean" },
    json: { type: "boolean" },
  });
  if (maybeHelp(values, LOGS_HELP)) return 0;
  if (positionals.length !== 1) return reportError("logs: give exactly one task id (see 'agent-shell logs --help')", 2);
  if (values.json && values.follow) return reportError("logs: --json and --follow cannot be combined", 2);
  if (values.stdout && values.stderr) return reportError("logs: give --stdout or --stderr, not both (neither: both, merged)", 2);
  // --follow starts from the last 10 lines unless told otherwise.
  const tail = intOption("logs", "tail", values.tail, 0) ?? (values.follow && !values.all ? 10 : undefined);
  const taskId = onHost(values.host, positionals[0]!);
  const stream = values.stderr ? "stderr" : "stdout";
  return withDaemon(values["state-dir"], async (client) => {
    const reader = new LogReader(client, taskId, stream);
    const info = await reader.status();
    if (info.error) return reportError(info);
    // A far-side task's log files are on its host: never open a local file of that name.
    const far = typeof info.host === "string" && taskId.startsWith(`${info.host}:`);
    if (far) reader.remote();
    const merged = !far && !values.stdout && !values.stderr && !values.json ? MergedLog.open(info.stdout_path as string | undefined) : null;
    if (merged) return followMerged(client, taskId, merged, info.status === "running", { tail, follow: values.follow === true, timestamps: values.timestamps === true });
    let total = Number(info[`${stream}_total_bytes`] ?? 0);
    if (values.json) {
      const r = await client.call("task_output", { task_id: taskId, offset: 0, length: total, stream, max_bytes: RANGE, ...(tail !== undefined ? { tail_lines: tail } : {}) });
      printJson(r);
      return r.error ? 1 : 0;
    }
    const start = tail === undefined ? 0 : await reader.tailStart(total, tail);
    await reader.print(start, total);
    let pos = total;
    if (!values.follow) return 0;
    let running = info.status === "running";
    while (running) {
      const news = await client.awaitOutput({
        task_id: taskId,
        stdout_offset: stream === "stdout" ? pos : Number.MAX_SAFE_INTEGER,
        stderr_offset: stream === "stderr" ? pos : Number.MAX_SAFE_INTEGER,
        timeout_ms: POLL_MS,
      });
      if (!news.found) return reportError(`Task ${taskId} is gone (it expired or the daemon restarted)`);
      total = stream === "stdout" ? news.stdout_total : news.stderr_total;
      if (total > pos) await reader.print(pos, total);
      pos = Math.max(pos, total);
      running = news.running;
    }
    return 0;
  });
}

/** Reads a stream's bytes from its spool file when there is one, else through range reads. */
class LogReader {
  private path: string | undefined;
  private local = true;

  constructor(
    private readonly client: DaemonClient,
    private readonly taskId: string,
    private readonly stream: "stdout" | "stderr",
  ) {}

  async status(): Promise<ToolResult> {
    const r = await this.client.call("task_output", { task_id: this.taskId, offset: 0, length: 0, stream: this.stream });
    if (this.local) this.path ??= r[`${this.stream}_path`] as string | undefined;
    return r;
  }

  /** The log files are on another host: read through task_output only. */
  remote(): void {
    this.local = false;
    this.path = undefined;
  }

  /** Copies bytes [start, end) to stdout. */
  async print(start: number, end: number): Promise<void> {
    let pos = start;
    if (this.path) pos += this.copyFromFile(pos, end);
    while (pos < end) {
      const len = Math.min(RANGE, end - pos);
      const r = await this.client.call("task_output", { task_id: this.taskId, offset: pos, length: len, stream: this.stream, max_bytes: RANGE });
      if (r.error) throw new Error(String(r.error));
      if (this.local) this.path ??= r[`${this.stream}_path`] as string | undefined;
      writeAll(1, new TextEncoder().encode(String(r[this.stream] ?? "")));
      pos += len;
    }
  }

  /** Offset where the last `lines` lines begin. */
  async tailStart(total: number, lines: number): Promise<number> {
    if (lines === 0) return total;
    if (!this.path && total > 0) await this.status();
    if (!this.path) return 0;
    const fd = openSync(this.path, "r");
    try {
      const buf = new Uint8Array(64 * 1024);
      let end = total;
      let seen = 0;
      // A final newline ends the last line; it does not start another one.
      let skipFinal = true;
      while (end > 0) {
        const start = Math.max(0, end - buf.byteLength);
        const n = readSync(fd, buf, 0, end - start, start);
        for (let i = n - 1; i >= 0; i--) {
          if (buf[i] !== 10) {
            skipFinal = false;
            continue;
          }
          if (skipFinal && start + i === total - 1) continue;
          if (++seen === lines) return start + i + 1;
        }
        end = start;
      }
      return 0;
    } finally {
      closeSync(fd);
    }
  }

  /** Returns how many bytes it copied (fewer than asked if the file stops short, e.g. at its cap). */
  private copyFromFile(start: number, end: number): number {
    let fd: number;
    try {
      fd = openSync(this.path!, "r");
    } catch {
      return 0;
    }
    try {
      const buf = new Uint8Array(Math.min(1 << 20, Math.max(1, end - start)));
      let pos = start;
      while (pos < end) {
        const n = readSync(fd, buf, 0, Math.min(buf.byteLength, end - pos), pos);
        if (n <= 0) break;
        writeAll(1, buf.subarray(0, n));
        pos += n;
      }
      return pos - start;
    } finally {
      closeSync(fd);
    }
  }
}

/** Prints the merged log (tail first), then, with follow, each new line until the task ends. */
async function followMerged(
  client: DaemonClient,
  taskId: string,
  log: MergedLog,
  running: boolean,
  opts: { tail?: number; follow: boolean; timestamps: boolean },
): Promise<number> {
  const colour = colourEnabled(process.stdout);
  const print = (lines: MergedLine[]) => {
    let text = "";
    for (const l of lines) {
      const stamp = opts.timestamps ? `${new Date(l.at).toISOString()} ` : "";
      // On a terminal stderr lines are marked (red); piped output stays byte for byte.
      text += stamp + (l.stream === "stderr" && colour ? paint(l.text.replace(/\n$/, ""), "red", true) + (l.text.endsWith("\n") ? "\n" : "") : l.text);
    }
    if (text) writeAll(1, new TextEncoder().encode(text));
  };
  let first = log.read();
  if (!running || !opts.follow) first = first.concat(log.flush());
  print(opts.tail === undefined ? first : opts.tail === 0 ? [] : first.slice(-opts.tail));
  if (!opts.follow) return 0;
  let offsets = { stdout: 0, stderr: 0 };
  while (running) {
    const news = await client.awaitOutput({ task_id: taskId, stdout_offset: offsets.stdout, stderr_offset: offsets.stderr, timeout_ms: POLL_MS });
    if (!news.found) return reportError(`Task ${taskId} is gone (it expired or the daemon restarted)`);
    offsets = { stdout: news.stdout_total, stderr: news.stderr_total };
    running = news.running;
    print(log.read());
  }
  print(log.read().concat(log.flush()));
  return 0;
}
