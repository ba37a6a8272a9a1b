/**
 * The Landlock level (SPEC §11): where user namespaces are refused, the spawn helper
 * (runtime/spawn-helper/) restricts each command with the policy's Landlock ruleset
 * (ruleset.ts, rules.ts) between fork and exec.
 */
import { landlockAbi } from "./syscalls.ts";

export function probeLandlock(): { abi: number } | { error: string } {
  if (process.platform !== "linux") return { error: "Landlock is a Linux feature" };
  try {
    const abi = landlockAbi();
    if (typeof abi === "number") return { abi };
    return { error: abi.errno === 38 ? "the kernel has no Landlock (ENOSYS)" : abi.errno === 95 ? "Landlock is disabled at boot (EOPNOTSUPP)" : abi.message };
  } catch (e) {
    return { error: `cannot query Landlock: ${(e as Error).message}` };
  }
}
