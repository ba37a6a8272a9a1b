import { z } from "zod";
import { invalidArgument } from "../../errors.ts";
import { compileUserRegex } from "../../safety/regex/regex-guard.ts";

/**
 * Strings that become argv, paths or environment entries: the OS cannot carry a NUL byte
 * there, so it is refused up front as INVALID_ARGUMENT naming the field, not left to fail
 * at spawn as an I/O error.
 */
export const osString = () => z.string().refine((s) => !s.includes("\0"), { message: "must not contain NUL bytes" });

/** Environment additions: names without `=` or NUL, values without NUL. */
export const envSchema = () =>
  z.record(
    osString().refine((k) => k !== "" && !k.includes("="), { message: "environment variable names must be non-empty and contain no '='" }),
    osString(),
  );

/** A caller's regex parameter, compiled; INVALID_ARGUMENT naming the field when it is refused. */
export function userRegex(tool: string, field: string, source: string): RegExp {
  try {
    return compileUserRegex(source);
  } catch (e) {
    throw invalidArgument(tool, field, (e as Error).message, { [field]: source });
  }
}

/** Output parameters (SPEC §15): how much of the output a result shows, and whether shaped. */
export const outputParameters = () => ({
  max_output_bytes: z.number().int().min(1000).max(2_500_000).optional().describe("Output budget (default: 8000)."),
  output: z.enum(["shaped", "raw"]).optional().describe("'raw': unshaped head and tail."),
});
