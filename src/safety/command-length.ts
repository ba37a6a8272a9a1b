/**
 * The command reaches the shell as one argument (`bash -c COMMAND`), and Linux refuses a
 * single argument of MAX_ARG_STRLEN (131072) bytes or more, counting its terminating NUL,
 * with E2BIG. Checked up front so the caller learns which field and which limit.
 */
export const MAX_COMMAND_BYTES = 131071;

/** Why the command cannot be run as one argument, or null when it fits. */
export function commandLengthProblem(command: string): string | null {
  // Cheap bound first: a UTF-16 unit is at most 3 UTF-8 bytes.
  if (command.length * 3 <= MAX_COMMAND_BYTES) return null;
  const bytes = Buffer.byteLength(command, "utf8");
  if (bytes <= MAX_COMMAND_BYTES) return null;
  return `is ${bytes} bytes long; Linux runs at most ${MAX_COMMAND_BYTES} bytes (128 KiB) as one command argument: write the script to a file and run that file instead`;
}
