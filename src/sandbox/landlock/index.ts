/**
 * The Landlock level (SPEC §11): where user namespaces are refused, commands start through
 * a launcher — this same executable in the hidden mode `__sandbox-exec` — that restricts
 * itself with a Landlock ruleset and then execs the command. See exec.ts and rules.ts.
 */
import { encodePolicy } from "./encode.ts";
import { landlockAbi } from "./syscalls.ts";
import type { SandboxPolicy } from "../policy.ts";

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

/** This executable: the compiled binary itself, or bun plus the entry script when run from source. */
function selfCommand(): string[] {
  return Bun.main.startsWith("/$bunfs/") || Bun.main === process.execPath ? [process.execPath] : [process.execPath, Bun.main];
}

/** argv that runs `argv` restricted by `policy`. */
export function landlockCommand(policy: SandboxPolicy, argv: string[]): string[] {
  return [...selfCommand(), "__sandbox-exec", encodePolicy(policy), "--", ...argv];
}
