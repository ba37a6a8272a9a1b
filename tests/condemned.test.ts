/**
 * A process is condemned (its end certain, by the kernel's word) once a signal it cannot
 * handle is sent to it: the kernel queues SIGKILL to it at once (runtime/process-group.ts).
 * kill_shell answers then (SPEC §18), not when the exit has travelled back.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { condemned } from "../src/runtime/process-group.ts";

const started: Bun.Subprocess[] = [];
afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
});

/** `bash -c script`, and once it has said "ready", its pid. */
async function ready(script: string): Promise<Bun.Subprocess> {
  const p = Bun.spawn(["bash", "-c", `${script}`], { stdout: "pipe", stderr: "ignore" });
  started.push(p);
  const reader = p.stdout.getReader();
  let seen = "";
  while (!seen.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("exited before it was ready");
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return p;
}

/**
 * Resolves once `pid` runs `program` and sleeps in it. (A process that is running, or has
 * another signal pending, gets the signal when it next runs instead: the kernel condemns it
 * only then, and agent-shell waits for its end as before.)
 */
async function sleepingIn(pid: number, program: string): Promise<void> {
  const state = () => /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, "latin1"))?.[1];
  // Asleep in its program three looks in a row, 10 ms apart: past its start-up, in nanosleep.
  for (let asleep = 0; asleep < 3; await Bun.sleep(10)) {
    asleep = readFileSync(`/proc/${pid}/cmdline`, "latin1").startsWith(`${program}\0`) && state() === "S" ? asleep + 1 : 0;
  }
}

test("a process with SIGTERM's default action is condemned the moment SIGTERM is sent, not before", async () => {
  const p = Bun.spawn(["sleep", "30"]);
  started.push(p);
  await sleepingIn(p.pid, "sleep");
  expect(condemned(p.pid)).toBe(false);
  process.kill(p.pid, "SIGTERM");
  expect(condemned(p.pid)).toBe(true);
  await p.exited;
  expect(p.signalCode).toBe("SIGTERM");
  expect(condemned(p.pid)).toBe(true); // a zombie, or gone
});

test("a process that ignores SIGTERM, or handles it, is not condemned by it", async () => {
  const ignoring = await ready("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  const handling = await ready("trap 'sleep 0.2; exit 3' TERM; echo ready; while :; do sleep 0.05; done");
  for (const p of [ignoring, handling]) process.kill(p.pid, "SIGTERM");
  expect(condemned(ignoring.pid)).toBe(false);
  expect(condemned(handling.pid)).toBe(false);
  expect(await handling.exited).toBe(3);
  process.kill(ignoring.pid, "SIGKILL");
  expect(condemned(ignoring.pid)).toBe(true);
  await ignoring.exited;
});
