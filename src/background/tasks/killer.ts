import { within } from "../../first-of.ts";
import type { ProcessHandle } from "../../runtime/types.ts";

const POLL_MS = 10;

/** Resolves true once nothing of the handle's group/session is alive, false after `ms`. */
async function waitGroupGone(handle: ProcessHandle, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  // The leader's exit is an event; only what it leaves behind needs polling.
  await within(handle.exited, ms);
  for (;;) {
    if (!(await handle.groupAlive())) return true;
    if (performance.now() >= deadline) return false;
    await Bun.sleep(POLL_MS);
  }
}

/**
 * Terminates a process group: SIGTERM, up to `graceMs` for it to go, then SIGKILL.
 * Resolves only when the group is gone (or, for a process that cannot be killed at all,
 * after a last bounded wait).
 */
export async function terminateGroup(handle: ProcessHandle, graceMs: number): Promise<void> {
  handle.signal("SIGTERM");
  if (await waitGroupGone(handle, graceMs)) return;
  handle.signal("SIGKILL");
  await waitGroupGone(handle, 5000);
}
