import { handledFs, NET, rulesetAttrSize, SCOPE } from "./abi.ts";
import { decodePolicy } from "./encode.ts";
import { landlockRules } from "./rules.ts";
import { readFileSync } from "node:fs";
import { seccompProgram } from "../seccomp/filter.ts";
import { addPathRule, applySeccomp, closeFd, createRuleset, dropCapabilities, execve, landlockAbi, openPath, restrictSelf } from "./syscalls.ts";

/** Exit status when the sandbox could not be applied: the command never ran. */
const CANNOT_SANDBOX = 126;

/**
 * `agent-shell __sandbox-exec POLICY -- ARGV...`: restricts this process with Landlock, then
 * becomes the command (execve), so the command and everything it starts carry the ruleset.
 * Any failure exits 126 without running the command: never unrestricted.
 */
export function runSandboxExec(args: string[]): number {
  try {
    const sep = args.indexOf("--");
    if (sep !== 1 || args.length < 3) throw new Error("usage: agent-shell __sandbox-exec POLICY -- COMMAND...");
    const policy = decodePolicy(args[0]!);
    const argv = args.slice(2);
    const abi = landlockAbi();
    if (typeof abi !== "number") throw abi;
    const ruleset = createRuleset(rulesetAttr(abi, policy.network));
    for (const rule of landlockRules(policy, handledFs(abi))) {
      const fd = openPath(rule.path);
      if (fd === null) continue; // gone since the policy was computed: nothing to allow
      try {
        addPathRule(ruleset, fd, rule.rights);
      } finally {
        closeFd(fd);
      }
    }
    // The command's environment comes on fd 4: this launcher ran with the launcher environment,
    // so nothing a call sets (LD_PRELOAD, BUN_BE_BUN) acted before the restrictions (SPEC §20).
    const env = commandEnv();
    dropCapabilities();
    restrictSelf(ruleset);
    closeFd(ruleset);
    applySeccomp(seccompProgram({ allowUnixSockets: policy.allowUnixSockets.length > 0 }));
    // fd 3 is the runtime's pinned directory: not the command's.
    closeFd(3);
    const path = env.find((e) => e.startsWith("PATH="))?.slice(5) ?? "/usr/bin:/bin";
    const file = argv[0]!.includes("/") ? argv[0]! : Bun.which(argv[0]!, { PATH: path });
    if (!file) throw new Error(`${argv[0]}: command not found`);
    throw execve(file, argv, env);
  } catch (e) {
    process.stderr.write(`agent-shell: cannot start the command inside the Landlock sandbox: ${(e as Error).message}\n`);
    return CANNOT_SANDBOX;
  }
}

/** The command's environment, NUL-separated on fd 4 (absent: the launcher's own). */
function commandEnv(): string[] {
  let text: string;
  try {
    text = readFileSync(4, "utf8");
  } catch {
    return Object.entries(process.env).map(([k, v]) => `${k}=${v}`);
  } finally {
    closeFd(4);
  }
  return text.split("\0").filter((e) => e.includes("="));
}

/** Every right this ABI knows is handled; the network too when it is cut; signals and abstract sockets scoped. */
function rulesetAttr(abi: number, network: boolean): Buffer {
  const attr = Buffer.alloc(rulesetAttrSize(abi));
  attr.writeBigUInt64LE(handledFs(abi), 0);
  // Landlock cannot tell loopback from other addresses: with the network cut, all TCP is.
  if (abi >= 4) attr.writeBigUInt64LE(network ? 0n : NET.BIND_TCP | NET.CONNECT_TCP, 8);
  if (abi >= 6) attr.writeBigUInt64LE(SCOPE.SIGNAL | SCOPE.ABSTRACT_UNIX_SOCKET, 16);
  return attr;
}
