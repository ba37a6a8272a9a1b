import type { SandboxLevel } from "./policy.ts";

/**
 * What a level cannot hold of SPEC §20, said in `sandbox check` and in every result at that
 * level (`sandbox_notes`): never a silent gap. The namespaces level holds all of it.
 */
const LANDLOCK_GAPS = [
  "chmod/chown of files you own outside the writable roots are not prevented (Landlock has no right for them; for a root server that includes device nodes such as /dev/null)",
  "git hooks and config under the writable roots are writable while a command runs; what it planted is disarmed when it ends",
  "a secret inside a writable root stays readable",
  "with the network off, loopback TCP is cut too",
];

export function levelGaps(level: SandboxLevel | string | undefined): string[] {
  return level === "landlock" ? LANDLOCK_GAPS : [];
}
