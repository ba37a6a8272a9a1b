import { probeBwrap, probeBwrapAsync, type BwrapProbe } from "./namespaces/bwrap.ts";
import { probeLandlock } from "./landlock/index.ts";
import type { SandboxLevel } from "./policy.ts";

export type { SandboxLevel, SandboxMode, SandboxPolicy } from "./policy.ts";

export type LevelChoice = { level: "namespaces"; bwrap: BwrapProbe } | { level: "landlock"; abi: number } | { level: null; missing: string };

let cached: LevelChoice | null = null;

/**
 * The strongest containment this machine allows: namespaces (bwrap with user, mount and
 * pid namespaces), else Landlock (ABI ≥ 1), else none. Probed once per process.
 * AGENT_SHELL_SANDBOX_LEVEL=namespaces|landlock forces a level (a testing/diagnostic knob).
 */
export function sandboxLevel(): LevelChoice {
  cached ??= chooseLevel(process.env.AGENT_SHELL_SANDBOX_LEVEL);
  return cached;
}

/**
 * Probes ahead, without blocking (a server calls it before loading its modules, so the
 * probe's processes run meanwhile); sandboxLevel() then finds the answer ready.
 */
export async function primeSandboxLevel(): Promise<void> {
  const forced = process.env.AGENT_SHELL_SANDBOX_LEVEL;
  if (cached || (forced && forced !== "namespaces")) return;
  const bwrap = await probeBwrapAsync();
  cached ??= chooseLevel(forced, bwrap);
}

function chooseLevel(forced: string | undefined, bwrapProbed?: BwrapProbe | { error: string }): LevelChoice {
  if (forced !== undefined && forced !== "" && forced !== "namespaces" && forced !== "landlock") {
    return { level: null, missing: `AGENT_SHELL_SANDBOX_LEVEL must be 'namespaces' or 'landlock', got '${forced}'` };
  }
  const want = forced as SandboxLevel | undefined;
  const reasons: string[] = [];
  if (!want || want === "namespaces") {
    const bwrap = bwrapProbed ?? probeBwrap();
    if ("path" in bwrap) return { level: "namespaces", bwrap };
    reasons.push(bwrap.error);
  }
  if (!want || want === "landlock") {
    const ll = probeLandlock();
    if ("abi" in ll && ll.abi >= 1) return { level: "landlock", abi: ll.abi };
    reasons.push(`Landlock: ${"error" in ll ? ll.error : `ABI ${ll.abi}`}`);
  }
  return { level: null, missing: reasons.join("; ") };
}
