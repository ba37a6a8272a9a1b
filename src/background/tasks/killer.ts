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
 * Whether the group is gone within `ms`: by its cgroup's word as it happens (most processes
 * die of SIGTERM within a millisecond, before their exit has travelled to this process), or
 * else by the leader's exit and polls.
 */
function goneWithin(handle: ProcessHandle, ms: number, outputClosed?: Promise<unknown>): Promise<boolean> {
  return handle.whenGone ? handle.whenGone(ms, outputClosed) : waitGroupGone(handle, ms);
}

/**
 * Terminates a process group: SIGTERM, up to `graceMs` for it to go, then SIGKILL.
 * Resolves once the group's end is certain (SPEC §18): gone by the kernel's word, or killed
 * through its cgroup, which nothing escapes; its exit is recorded when it has travelled here.
 * Otherwise only when the group is gone (or, for a process that cannot be killed at all,
 * after a last bounded wait). True when its end is certain. `outputClosed`: when the task's
 * pipes have closed (most often as it dies), a moment to look.
 *
 * Not sooner: a SIGTERM that ends a process makes its end certain as it is sent (the kernel
 * queues SIGKILL to all its threads), but answering then let a process be seen running right
 * after the answer, 2 kills in 100 here (4 with the machine busy).
 */
export async function terminateGroup(handle: ProcessHandle, graceMs: number, outputClosed?: Promise<unknown>): Promise<boolean> {
  handle.signal("SIGTERM");
  if (await goneWithin(handle, graceMs, outputClosed)) return true;
  handle.signal("SIGKILL");
  // Through a cgroup nothing escapes it, and it says when all is gone, before the exits travel here.
  return await goneWithin(handle, 5000, outputClosed);
}
