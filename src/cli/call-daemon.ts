import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { CodedError, invalidArgument, isErrorResult, type ToolResult } from "../errors.ts";
import { allowedRoots, checkWorkingDirectory } from "../safety/paths.ts";
import { callConfirmed } from "./confirm.ts";
import { withDaemon } from "./daemon-client.ts";
import type { HostFlags } from "./host-flags.ts";
import { printJson } from "./report.ts";

/** Task lookups always go to the daemon: that is where the tasks live. */
const TASK_TOOLS = new Set(["task_output", "kill_shell", "task_list", "write_stdin"]);
/** Not forwarded to background children (they keep them from waiting on a pager or prompt). */
const NOT_FORWARDED = new Set(["PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT"]);

/** Whether `call TOOL ARGS` belongs to the daemon: background work and task lookups. */
export function routesToDaemon(tool: string, args: unknown): args is Record<string, unknown> {
  if (TASK_TOOLS.has(tool)) return true;
  if (typeof args !== "object" || args === null) return false;
  const a = args as Record<string, unknown>;
  return (tool === "bash" && (a.run_in_background === true || a.service !== undefined)) || (tool === "task" && a.background === true);
}

/**
 * `call` through the daemon. The daemon runs from / for every user's directory, so the
 * CLI applies its own sandbox first (its cwd plus --allow) and sends an absolute
 * working_directory, and the child inherits this shell's environment as `start` does.
 */
export async function callViaDaemon(tool: string, args: Record<string, unknown>, flags: HostFlags): Promise<number> {
  if (tool === "task") {
    // A subagent runs in its server's cwd, and the daemon's is /: refuse rather than let it loose there.
    return print(
      invalidArgument(
        "task",
        "background",
        "a background subagent from the command line would run in the daemon's directory (/), not yours; " +
          "run it in the foreground, or start your agent as a background command from your project: agent-shell start -- claude -p '<prompt>'",
        { background: true },
      ).toResult(),
    );
  }
  let sent = args;
  // A remote command (host) has a remote directory and environment: nothing local to apply.
  if (tool === "bash" && args.host === undefined) {
    const cwd = realpathSync(resolve(flags.cwd ?? process.cwd()));
    const raw = typeof args.working_directory === "string" ? args.working_directory : ".";
    let workingDirectory: string;
    try {
      workingDirectory = checkWorkingDirectory(raw, cwd, allowedRoots(cwd, flags.allow ?? []), { command: args.command ?? null, working_directory: raw });
    } catch (e) {
      if (e instanceof CodedError) return print(e.toResult());
      throw e;
    }
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !NOT_FORWARDED.has(k)));
    const env = typeof args.env === "object" && args.env !== null ? (args.env as Record<string, string>) : {};
    sent = { ...args, working_directory: workingDirectory, env: { ...inherited, ...env } };
  }
  return withDaemon(flags["state-dir"], async (client) => {
    // Waits can be long: allow the tool's own timeout plus a margin.
    const waitSeconds = Math.max(Number(args.timeout_seconds ?? args.timeout ?? 30), Number(args.ready_timeout_seconds ?? 60), Number(args.yield_ms ?? 0) / 1000);
    const result = await callConfirmed(client, tool, sent, flags.yes === true, (waitSeconds + 60) * 1000);
    return print(result);
  });
}

function print(result: ToolResult): number {
  printJson(result);
  return isErrorResult(result) ? 1 : 0;
}
