import { z } from "zod";
import { invalidArguments } from "../errors.ts";

/** bash parameters for interactive programs: terminals, stdin, handing a call over to the background. */
export const interactiveParameters = {
  tty: z
    .boolean()
    .optional()
    .describe(
      "Run under a pseudo-terminal (REPLs, prompts, curses UIs); stdout and stderr arrive merged in stdout as plain rendered text, and " +
        "`screen` shows the visible screen. A foreground tty command stopped at a prompt becomes a background task (answer it with " +
        "write_stdin). (default: false)",
    ),
  cols: z.number().int().min(10).max(1000).optional().describe("Terminal width with tty. (default: 120)"),
  rows: z.number().int().min(2).max(1000).optional().describe("Terminal height with tty. (default: 30)"),
  keep_stdin_open: z
    .boolean()
    .optional()
    .describe("Background only: give the task a writable stdin pipe for write_stdin. (default: false, stdin is /dev/null)"),
  background_after_seconds: z
    .number()
    .positive()
    .optional()
    .describe(
      "Foreground, but if still running after this many seconds, keep it running as a background task and return its task_id with the output so far. (default: none)",
    ),
};

export interface InteractiveArgs {
  run_in_background?: boolean;
  stdin?: string;
  tty?: boolean;
  cols?: number;
  rows?: number;
  keep_stdin_open?: boolean;
  background_after_seconds?: number;
}

/** Refuses combinations that make no sense (INVALID_ARGUMENT naming every field). */
export function checkInteractive(args: InteractiveArgs): void {
  const problems: Array<[string, string]> = [];
  if (args.keep_stdin_open && !args.run_in_background) {
    problems.push(["keep_stdin_open", "only with run_in_background: true (use tty: true for a foreground program that reads input)"]);
  }
  if (args.keep_stdin_open && args.stdin !== undefined) {
    problems.push(["stdin", "cannot be combined with keep_stdin_open (stdin feeds text, then closes)"]);
  }
  for (const field of ["cols", "rows"] as const) {
    if (args[field] !== undefined && !args.tty) problems.push([field, "only with tty: true"]);
  }
  if (args.background_after_seconds !== undefined && args.run_in_background) {
    problems.push(["background_after_seconds", "only for foreground commands, not with run_in_background"]);
  }
  if (problems.length) throw invalidArguments("bash", problems, { fields: problems.map(([f]) => f) });
}
