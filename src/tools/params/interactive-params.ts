import { z } from "zod";
import { invalidArguments } from "../../errors.ts";

/** bash parameters for interactive programs: terminals, stdin, handing a call over to the background. */
export const interactiveParameters = () => ({
  tty: z
    .boolean()
    .optional()
    .describe("Pseudo-terminal; type with write_stdin."),
  cols: z.number().int().min(10).max(1000).optional().describe("tty width"),
  rows: z.number().int().min(2).max(1000).optional().describe("tty height"),
  keep_stdin_open: z
    .boolean()
    .optional()
    .describe("Keep stdin open for write_stdin."),
  background_after_seconds: z
    .number()
    .positive()
    .optional()
    .describe("Background it after N seconds."),
});

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
