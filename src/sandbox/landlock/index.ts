/**
 * Placeholder for the Landlock level (built on the `landlock` branch, which replaces this
 * file). Until then the level reports itself as not built, so selection skips it.
 */
import type { SandboxPolicy } from "../policy.ts";

export function probeLandlock(): { abi: number } | { error: string } {
  return { error: "not built" };
}

export function landlockCommand(_policy: SandboxPolicy, _argv: string[], _opts: { selfExe: string }): string[] {
  throw new Error("the Landlock sandbox level is not built into this binary");
}
