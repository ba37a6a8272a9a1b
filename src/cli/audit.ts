import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, watch } from "node:fs";
import { resolve } from "node:path";
import { AUDIT_KEPT, type AuditEntry, auditFile } from "../audit/audit-log.ts";
import { defaultStateDir } from "../background/state/state-dir.ts";
import { loadConfig } from "../config/load.ts";
import { UsageError } from "./usage.ts";
import { parseVerbArgs } from "./verb-args.ts";

const USAGE = "usage: agent-shell audit [--since DURATION] [--tool NAME] [--decision allow|ask|deny] [--json] [--follow] [--config FILE]";

/** `agent-shell audit`: the record of calls (SPEC §22) for people, one line a call; `--json` as recorded. */
export async function auditCommand(argv: string[]): Promise<number> {
  const { values: given } = parseVerbArgs("audit", argv, {
    since: { type: "string" },
    tool: { type: "string" },
    decision: { type: "string" },
    json: { type: "boolean" },
    follow: { type: "boolean", short: "f" },
    config: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  const values = given as { since?: string; tool?: string; decision?: string; json?: boolean; follow?: boolean; config?: string; help?: boolean };
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  if (values.decision !== undefined && !["allow", "ask", "deny"].includes(values.decision)) throw new UsageError(`--decision is allow, ask or deny\n${USAGE}`);
  const since = values.since === undefined ? 0 : Date.now() - durationMs(values.since);
  const { config } = loadConfig({ configFile: values.config });
  const file = auditFile(resolve(config.state_dir ?? defaultStateDir()));
  const show = (line: string) => {
    let e: AuditEntry;
    try {
      e = JSON.parse(line) as AuditEntry;
    } catch {
      return;
    }
    if (Date.parse(e.time) < since || (values.tool && e.tool !== values.tool) || (values.decision && e.decision !== values.decision)) return;
    process.stdout.write((values.json ? line : humanLine(e)) + "\n");
  };
  for (let i = AUDIT_KEPT; i >= 1; i--) if (existsSync(`${file}.${i}`)) readFileSync(`${file}.${i}`, "utf8").split("\n").forEach(show);
  let offset = 0;
  const readNew = () => {
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      return;
    }
    if (size < offset) offset = 0; // rotated
    if (size === offset) return;
    const fd = openSync(file, "r");
    const buf = Buffer.alloc(size - offset);
    readSync(fd, buf, 0, buf.length, offset);
    closeSync(fd);
    const text = buf.toString("utf8");
    const end = text.lastIndexOf("\n") + 1; // a line still being written waits for its end
    offset += Buffer.byteLength(text.slice(0, end));
    text.slice(0, end).split("\n").forEach(show);
  };
  if (!values.follow) {
    readNew();
    return 0;
  }
  await new Promise<void>((done) => {
    // Ctrl-C or a SIGTERM ends the following cleanly, whenever it comes.
    const stop = () => {
      clearInterval(timer);
      watcher?.close();
      done();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    const timer = setInterval(readNew, 500); // also after a rotation replaced the file being watched
    let watcher: ReturnType<typeof watch> | null = null;
    try {
      watcher = watch(resolve(file, ".."), () => readNew());
    } catch {
      // polling alone
    }
    readNew();
  });
  return 0;
}

function humanLine(e: AuditEntry): string {
  const client = e.connection.client ? `${e.connection.client}${e.connection.version ? " " + e.connection.version : ""}` : e.connection.transport;
  const what = e.command ?? e.prompt ?? e.tool;
  const o = e.outcome;
  const outcome =
    o.error_code !== undefined ? String(o.error_code)
    : o.needs_confirmation ? "needs confirmation"
    : o.signal !== undefined ? `signal ${o.signal}`
    : o.exit_code !== undefined ? `exit ${o.exit_code}`
    : o.task_id !== undefined ? `task ${o.task_id}`
    : "ok";
  const tool = e.tool === "bash" ? "" : `${e.tool}: `;
  return `${e.time}  ${client}  ${e.decision}  ${tool}${what.replace(/\s*\n\s*/g, " ⏎ ")}  → ${outcome} (${o.duration_ms} ms)`;
}

function durationMs(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new UsageError(`--since takes a duration such as 30s, 10m, 2h or 1d, not '${text}'\n${USAGE}`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? "s") as "s"];
}
