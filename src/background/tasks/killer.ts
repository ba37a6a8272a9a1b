import { within } from "../../first-of.ts";
import type { ProcessHandle } from "../../runtime/types.ts";

/**
 * Polls start short and grow: what outlives its leader is most often already exiting (a
 * sandbox's namespace init, which bwrap does not wait for, ends ~1 ms after it).
 */
const FIRST_POLL_MS = 1;
const MAX_POLL_MS = 10;

/** Resolves true once nothing of the handle's group/session is alive, false after `ms`. */
async function waitGroupGone(handle: ProcessHandle, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  // The leader's exit is an event; only what it leaves behind needs polling.
  await within(handle.exited, ms);
  for (let pause = FIRST_POLL_MS; ; pause = Math.min(pause * 2, MAX_POLL_MS)) {
    if (!(await handle.groupAlive())) return true;
    if (performance.now() >= deadline) return false;
    await Bun.sleep(pause);
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
