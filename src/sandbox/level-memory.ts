import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LevelChoice } from "./index.ts";

/**
 * The sandbox level the last server found, kept in the state dir (which commands cannot read
 * or write), so that the next one can answer `initialize` with it before its own probe (a
 * bwrap run, 10–60 ms) is done. Only a level that was found is kept, and only for the same
 * boot, user and bwrap binary: the probe still runs and decides what commands get.
 */
const FILE = "sandbox-level.json";

interface Memory {
  key: string;
  choice: LevelChoice;
}

/** What makes a remembered level still true: this boot, this user, this bwrap. */
function currentKey(bwrapPath: string | null): string {
  let boot = "";
  try {
    boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {}
  let bwrap = "none";
  if (bwrapPath) {
    try {
      const st = statSync(bwrapPath);
      bwrap = `${bwrapPath}:${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {}
  }
  return `${boot}|${process.getuid?.() ?? -1}|${bwrap}|${process.env.AGENT_SHELL_SANDBOX_LEVEL ?? ""}`;
}

/** The level the last server on this boot found, when nothing it depended on changed; else null. */
export function rememberedLevel(stateRoot: string): LevelChoice | null {
  try {
    const memory = JSON.parse(readFileSync(join(stateRoot, FILE), "utf8")) as Memory;
    if (!memory.choice?.level) return null;
    const bwrap = memory.choice.level === "namespaces" ? memory.choice.bwrap.path : null;
    return memory.key === currentKey(bwrap) ? memory.choice : null;
  } catch {
    return null;
  }
}

/** Keeps a level that was found (never "none": a missing sandbox is always probed again). */
export function rememberLevel(stateRoot: string, choice: LevelChoice): void {
  if (!choice.level) return;
  const key = currentKey(choice.level === "namespaces" ? choice.bwrap.path : null);
  try {
    const tmp = join(stateRoot, `${FILE}.${process.pid}`);
    writeFileSync(tmp, JSON.stringify({ key, choice } satisfies Memory), { mode: 0o600 });
    renameSync(tmp, join(stateRoot, FILE));
  } catch {} // (a state dir not made yet: the next server probes, as this one did)
}
