/**
 * The record of every call (SPEC §22): `<state>/audit.jsonl`, one JSON object a line,
 * appended synchronously before the call's result goes back (so the line is on disk first,
 * and lines of one connection are in call order). Mode 0600 in the state dir, which no
 * sandboxed command can reach; rotated at `audit_max_bytes` (audit.jsonl.1 … .5 kept).
 * Values of `env` whose names §20 calls secret are written as "<redacted>".
 */
import { appendFileSync, chmodSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ToolResult } from "../errors.ts";
import { isSecretName } from "../runtime/env.ts";
import type { CallNote } from "../safety/confirmation/call-note.ts";

export const AUDIT_FILE = "audit.jsonl";
export const AUDIT_KEPT = 5;

/** Who is calling: the MCP client's name and version, and the face it came through. */
export type Connection = { client?: string; version?: string; transport: string };

export type AuditEntry = {
  time: string;
  connection: Connection;
  tool: string;
  command?: string;
  prompt?: string;
  cwd: string;
  host: string;
  env?: Record<string, string>;
  sandbox?: unknown;
  sandbox_level?: unknown;
  decision: string;
  decided_by?: string;
  confirmed_by?: string;
  outcome: Record<string, unknown>;
  network?: unknown;
};

export function auditFile(stateRoot: string): string {
  return join(stateRoot, AUDIT_FILE);
}

export class AuditLog {
  private size = -1;
  constructor(
    private readonly file: string,
    private readonly maxBytes: number,
  ) {}

  /** One call, as its result is about to be sent. Never throws: a full disk must not fail the call. */
  record(entry: AuditEntry): void {
    try {
      this.append(JSON.stringify(entry) + "\n");
    } catch {
      // The call's answer matters more than its record; the next call tries again.
    }
  }

  private append(line: string): void {
    if (this.size < 0) {
      mkdirSync(join(this.file, ".."), { recursive: true, mode: 0o700 });
      try {
        this.size = statSync(this.file).size;
      } catch {
        this.size = 0;
      }
    }
    const bytes = Buffer.byteLength(line);
    if (this.size > 0 && this.size + bytes > this.maxBytes) this.rotate();
    appendFileSync(this.file, line, { mode: 0o600 });
    if (this.size === 0) chmodSync(this.file, 0o600);
    this.size += bytes;
  }

  private rotate(): void {
    rmSync(`${this.file}.${AUDIT_KEPT}`, { force: true });
    for (let i = AUDIT_KEPT - 1; i >= 1; i--) {
      try {
        renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
      } catch {
        // not there yet
      }
    }
    renameSync(this.file, `${this.file}.1`);
    this.size = 0;
  }
}

/** What one call is recorded as: who, what, where, the decision and the outcome. */
type CallRecord = { tool: string; args: unknown; connection: Connection; cwd: string; note: CallNote; result: ToolResult; startedAt: number };

export function auditEntry(call: CallRecord): AuditEntry {
  const args = (typeof call.args === "object" && call.args !== null ? call.args : {}) as Record<string, unknown>;
  const r = call.result as Record<string, unknown>;
  const outcome: Record<string, unknown> = { duration_ms: Math.round(performance.now() - call.startedAt) };
  for (const k of ["exit_code", "signal", "task_id", "status", "error_code", "needs_confirmation"]) if (r[k] !== undefined) outcome[k] = r[k];
  const bytes = [r.stdout, r.stderr, r.output].reduce<number>((n, v) => n + (typeof v === "string" ? Buffer.byteLength(v) : 0), 0);
  if (bytes) outcome.output_bytes = bytes;
  const decision = call.note.decision ?? (r.error_code === "BLOCKED" ? "deny" : r.needs_confirmation ? "ask" : "allow");
  return {
    time: new Date().toISOString(),
    connection: call.connection,
    tool: call.tool,
    ...(typeof args.command === "string" ? { command: args.command } : {}),
    ...(typeof args.prompt === "string" ? { prompt: args.prompt } : {}),
    cwd: typeof args.working_directory === "string" ? args.working_directory : call.cwd,
    host: typeof args.host === "string" ? args.host : "local",
    ...(isRecord(args.env) ? { env: redacted(args.env) } : {}),
    ...(r.sandbox !== undefined ? { sandbox: r.sandbox } : {}),
    ...(r.sandbox_level !== undefined ? { sandbox_level: r.sandbox_level } : {}),
    decision,
    ...(call.note.decided_by ? { decided_by: call.note.decided_by } : r.error_code === "BLOCKED" ? { decided_by: "refused" } : {}),
    ...(call.note.confirmed_by && decision !== "deny" && !r.needs_confirmation ? { confirmed_by: call.note.confirmed_by } : {}),
    outcome,
    ...(r.network !== undefined ? { network: r.network } : {}),
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function redacted(env: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) out[k] = isSecretName(k) ? "<redacted>" : String(v);
  return out;
}
