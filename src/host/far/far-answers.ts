import type { ToolResult } from "../../errors.ts";

/**
 * What a far agent says is data, never agent-shell's own voice (SPEC §26): a far side may be
 * a machine a command took over. Its calls end by a deadline, its confirmation questions are
 * replaced by ours, and what it relays (progress, log notices) has control characters escaped
 * and is capped in rate.
 */

/** Beyond a call's own time limit: the far side's TERM → KILL grace, then this for its answer's trip back. */
const DEADLINE_MARGIN_S = 10;
/** task_output's wait when the call gives none (its schema's default). */
const DEFAULT_WAIT_S = 30;
/** The longest a timer can wait. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How long a call to a far agent may take before it fails (ms): its own time limit (bash's
 * timeout_seconds or readiness wait, task_output's wait, write_stdin's yield_ms; none for
 * kill_shell and task_list) plus the kill grace and a margin.
 */
export function farDeadlineMs(tool: string, args: Record<string, unknown>, killGraceSeconds: number): number {
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
  const own =
    tool === "bash" ? Math.max(num(args.timeout_seconds) ?? 0, num(args.ready_timeout_seconds) ?? 0)
    : tool === "task_output" && args.wait === true ? (num(args.timeout_seconds ?? args.timeout) ?? DEFAULT_WAIT_S)
    : tool === "write_stdin" ? (num(args.yield_ms) ?? 0) / 1000
    : 0;
  return Math.min(MAX_TIMER_MS, Math.ceil((own + killGraceSeconds + DEADLINE_MARGIN_S) * 1000));
}

/**
 * A far side's `needs_confirmation`, in our words: the command is the one we sent, the
 * message ours; the far side's own text is dropped (it could say anything).
 */
export function ownConfirmation(host: string, sent: Record<string, unknown>, result: ToolResult): ToolResult {
  if (result.needs_confirmation !== true) return result;
  const command = typeof sent.command === "string" ? sent.command : "";
  return {
    needs_confirmation: true,
    command,
    host,
    message: `Host '${host}' asks for confirmation before running: ${command}. Please confirm execution: ask the user, then call again with confirmed: true and exactly the same arguments (command, working_directory, env, stdin, tty, host, sandbox).`,
    ...(typeof sent.description === "string" ? { description: sent.description } : {}),
  };
}

/** C0 (but tab and newline), DEL, C1, and the bidirectional overrides that reorder what a person reads. */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Every string in a relayed value with its control characters as `\uXXXX` text. */
export function escapeControls<T>(value: T): T {
  if (typeof value === "string") return value.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`) as T;
  if (Array.isArray(value)) return value.map(escapeControls) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [escapeControls(k), escapeControls(v)])) as T;
  }
  return value;
}

/** At most `perSecond` relayed messages a second; counts what it turned away. */
export class RateCap {
  private windowStart = 0;
  private inWindow = 0;
  /** Turned away since the last `takeDropped()`. */
  private dropped = 0;

  constructor(private readonly perSecond: number) {}

  allow(now = Date.now()): boolean {
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.perSecond) {
      this.dropped++;
      return false;
    }
    this.inWindow++;
    return true;
  }

  takeDropped(): number {
    const n = this.dropped;
    this.dropped = 0;
    return n;
  }
}
