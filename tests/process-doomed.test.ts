/**
 * processDoomed: what lets kill_shell answer once a task's end is certain (SPEC §18) reads
 * the kernel's own state of each process. Real processes, real signals.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { processDoomed } from "../src/runtime/process-group.ts";

const started: Bun.Subprocess[] = [];
afterEach(async () => {
  for (const p of started.splice(0)) {
    p.kill("SIGKILL");
    await p.exited;
  }
});

/** A process that has reached its `sleep` (it printed, then exec'd). */
async function sleeper(script: string): Promise<Bun.Subprocess<"ignore", "pipe", "ignore">> {
  const p = Bun.spawn(["sh", "-c", `${script}; echo up; exec sleep 300`], { stdio: ["ignore", "pipe", "ignore"] });
  started.push(p);
  const reader = p.stdout.getReader();
  await reader.read(); // "up": the exec follows at once
  reader.releaseLock();
  // The exec has happened once /proc shows sleep's name.
  for (let i = 0; i < 500 && !(await Bun.file(`/proc/${p.pid}/comm`).text()).startsWith("sleep"); i++) await Bun.sleep(2);
  return p;
}

describe("processDoomed", () => {
  test("a sleeping process is not doomed", async () => {
    const p = await sleeper("true");
    expect(processDoomed(p.pid)).toBe(false);
  });

  test("right after a SIGTERM it does not handle, it is: the kernel made it SIGKILL as it was sent", async () => {
    const p = await sleeper("true");
    process.kill(p.pid, "SIGTERM");
    expect(processDoomed(p.pid)).toBe(true);
    await p.exited;
    expect(p.signalCode).toBe("SIGTERM");
  });

  test("a process that ignores SIGTERM is not doomed by it, and is by SIGKILL", async () => {
    const p = await sleeper("trap '' TERM");
    process.kill(p.pid, "SIGTERM");
    expect(processDoomed(p.pid)).toBe(false);
    expect(await Promise.race([p.exited.then(() => "exited"), Bun.sleep(100).then(() => "alive")])).toBe("alive");
    process.kill(p.pid, "SIGKILL");
    expect(processDoomed(p.pid)).toBe(true);
  });

  test("a process that has exited is doomed", async () => {
    const p = await sleeper("true");
    process.kill(p.pid, "SIGKILL");
    await p.exited;
    expect(processDoomed(p.pid)).toBe(true);
  });
});
