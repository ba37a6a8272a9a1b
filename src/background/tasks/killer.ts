import { within } from "../../first-of.ts";
import type { ProcessHandle } from "../../runtime/types.ts";

/**
 * Polls start short and grow: what outlives its leader is most often already exiting (a
 * sandbox's namespace init, which bwrap does not wait for, ends ~1 ms after it).
 */
const FIRST_POLL_MS = 1;
/** How long a group gets to die of SIGTERM by itself before the usual wait (a handler may take longer). */
const QUICK_DEATH_MS = 3;
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
 * Right after a signal, whether the group is gone by the kernel's word (its cgroup is empty)
 * within `ms`: most processes die of SIGTERM within ~0.2 ms, long before their exit has
 * travelled to this process, so checks between turns of the event loop settle it (a poll
 * of 1 ms or more would cost more than the death itself).
 */
async function goneWithin(handle: ProcessHandle, ms: number): Promise<boolean> {
  if (!handle.gone) return false;
  const deadline = performance.now() + ms;
  for (;;) {
    if (handle.gone()) return true;
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Terminates a process group: SIGTERM, up to `graceMs` for it to go, then SIGKILL.
 * Resolves once the group's end is certain (SPEC §18): gone by the kernel's word, or killed
 * through its cgroup, which nothing escapes; its exit is recorded when it has travelled here.
 * Otherwise only when the group is gone (or, for a process that cannot be killed at all,
 * after a last bounded wait). True when its end is certain.
 */
export async function terminateGroup(handle: ProcessHandle, graceMs: number): Promise<boolean> {
  handle.signal("SIGTERM");
  if (await goneWithin(handle, QUICK_DEATH_MS)) return true;
  if (await waitGroupGone(handle, graceMs)) return true;
  handle.signal("SIGKILL");
  // Through a cgroup nothing escapes it, and it says when all is gone, before the exits travel here.
  if (handle.killIsCertain && (await goneWithin(handle, 5000))) return true;
  return await waitGroupGone(handle, 5000);
}
