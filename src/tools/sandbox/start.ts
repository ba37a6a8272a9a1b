import { CWD_REPLACED_MESSAGE } from "../../sandbox/namespaces/bwrap.ts";
import type { ErrorCode } from "../../errors.ts";

/**
 * A sandboxed command that never started: bwrap could not set the sandbox up (it prints
 * one `bwrap: …` line and exits 1), or the start check found the working directory
 * swapped. Either is an error of the call, not a result of the command.
 */
export function sandboxStartFailure(exitCode: unknown, output: Record<string, unknown>): { code: ErrorCode; message: string } | null {
  const stderr = String(output.stderr ?? "");
  if (exitCode === 126 && stderr.startsWith(CWD_REPLACED_MESSAGE)) {
    return { code: "ACCESS_DENIED", message: `${CWD_REPLACED_MESSAGE.replace(/^agent-shell: /, "")}. Check working_directory and retry.` };
  }
  if (exitCode === 1 && output.stdout === "" && /^bwrap: [^\n]*Resource temporarily unavailable\n?$/.test(stderr)) {
    return {
      code: "IO_ERROR",
      message: `The sandbox could not start the command: the process limit is reached (${stderr.trim()}). See which tasks run many processes (task_list), end some with kill_shell, then retry.`,
    };
  }
  if (exitCode === 1 && output.stdout === "" && /^bwrap: [^\n]*\n?$/.test(stderr)) {
    return { code: "IO_ERROR", message: `The sandbox could not start the command (${stderr.trim()}); if the working directory is being changed, retry.` };
  }
  return null;
}
