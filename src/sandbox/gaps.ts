import { usesHostDevices } from "./namespaces/devices.ts";
import type { SandboxLevel } from "./policy.ts";

/**
 * What a level cannot hold of SPEC §20, said in `sandbox check`, the initialize instructions
 * and a connection's first result at that level (`sandbox_notes`): never a silent gap. The
 * namespaces level holds all of it.
 */
const LANDLOCK_GAPS = [
  "chmod/chown of files you own outside the writable roots are not prevented (Landlock has no right for them; for a root server that includes device nodes such as /dev/null)",
  "git hooks under the writable roots are writable while a command runs; a hook it changed is put back, and what it wrote in git's config that runs a program is disarmed as soon as it is written",
  "SysV IPC (message queues, semaphores, shared memory) is the host's: a command can reach other processes' IPC objects",
  "control files inside a writable root (shell startup files, harness settings, agent-shell's config: a home folder as the working directory) are writable while a command runs; a changed one is put back as it was, as soon as it changes and when the command ends",
  "agent-shell's state dir inside a writable root stays readable and writable (the spawn helper is run only after its bytes are checked)",
  "a secret inside a writable root stays readable; a hidden folder shows its entries' names (not their contents)",
  "with the network off, loopback TCP is cut too",
  "with the network allowlist (the default), Landlock holds TCP connections only: a command may connect to the proxy's port and the network_forward ports (at any address), and to nothing else, a server another command started included; UDP (DNS included) is not held",
];

/** Said at the namespaces level when a root server could not make device nodes of the sandbox's own (devices.ts). */
const HOST_DEVICES = "the sandbox uses the host's device nodes (/dev/null, /dev/zero, …): a root command could chmod them; agent-shell could not make nodes of its own here (mknod refused)";

export function levelGaps(level: SandboxLevel | string | undefined): string[] {
  if (level === "landlock") return LANDLOCK_GAPS;
  return level === "namespaces" && usesHostDevices() ? [HOST_DEVICES] : [];
}
