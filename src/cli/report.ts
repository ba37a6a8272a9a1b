import { writeSync } from "node:fs";
import { constants } from "node:os";
import type { ToolResult } from "../errors.ts";

/** Prints an error result (or message) on stderr as `agent-shell: message [CODE]`; returns the exit code. */
export function reportError(error: ToolResult | string, code = 1): number {
  if (typeof error === "string") {
    process.stderr.write(`agent-shell: ${error}\n`);
    return code;
  }
  process.stderr.write(`agent-shell: ${String(error.error)}${error.error_code ? ` [${String(error.error_code)}]` : ""}\n`);
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
