import { writeSync } from "node:fs";
import { constants } from "node:os";
import type { ToolResult } from "../errors.ts";

/** Prints an error result (or message) on stderr for people (no error-code tag; `--json` keeps it); returns the exit code. */
export function reportError(error: ToolResult | string, code = 1): number {
  process.stderr.write(`agent-shell: ${typeof error === "string" ? error : forPeople(error)}\n`);
  return code;
}

/** Exit status for a finished task or command: its code, 128+N for signal N. */
export function exitStatus(result: { exit_code?: unknown; signal?: unknown }): number {
  if (typeof result.signal === "string") {
    const n = (constants.signals as Record<string, number>)[result.signal];
    return 128 + (n ?? 0);
  }
  const code = result.exit_code;
  return typeof code === "number" && code >= 0 ? code & 0xff : 1;
}

/** Text on stdout, written synchronously (nothing lost at exit, EPIPE-safe). */
export function printOut(text: string): void {
  writeAll(1, new TextEncoder().encode(text));
}

/** Pretty JSON for `--json` output. */
export function printJson(value: unknown): void {
  writeAll(1, new TextEncoder().encode(JSON.stringify(value, null, 2) + "\n"));
}

/** Synchronous write so that nothing is lost at exit and order is kept; retries a full non-blocking fd. */
export function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.byteLength) {
    try {
      off += writeSync(fd, bytes, off, bytes.byteLength - off);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") continue;
      if (code === "EPIPE") return; // the reader went away (e.g. `| head`): drop the rest
      throw e;
    }
  }
}

/** A tool's message reworded for people at the command line: CLI verbs, not MCP tool names. */
function forPeople(error: ToolResult): string {
  const ctx = (error.context ?? {}) as Record<string, unknown>;
  if (error.error_code === "NOT_FOUND" && typeof ctx.task_id === "string") {
    return `no task or service named '${ctx.task_id}' (it may have expired; 'agent-shell ps --all' lists the known ones)`;
  }
  return String(error.error)
    .replaceAll("task_list", "'agent-shell ps'")
    .replaceAll("task_output", "'agent-shell logs'")
    .replaceAll("kill_shell", "'agent-shell kill'");
}
