/**
 * SPEC §14, exact containment without the sandbox (`--sandbox off`): each local task runs
 * in a cgroup of its own, so what left its process group or session (`setsid`, `setsid -f`,
 * `nohup … &`) and what removed agent-shell's variables (`env -u AGENT_SHELL_OWNER`) dies
 * with the task — on kill_shell, timeouts, shutdown and SIGKILL of the server. This machine
 * has a writable cgroup v2 hierarchy with cgroup.kill: without one this file FAILS.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { startServer, waitForExit, type McpSession } from "../helpers/mcp.ts";
import { processesMatching, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

/** The cgroup v2 mount and this process's own cgroup: the server makes its folder below. */
function cgroupHome(): string {
  const line = readFileSync("/proc/self/mountinfo", "utf8").split("\n").find((l) => l.split(" - ")[1]?.startsWith("cgroup2 "));
  if (!line) throw new Error("these tests need a cgroup v2 hierarchy (none is mounted)");
  const own = /^0::(.*)$/m.exec(readFileSync("/proc/self/cgroup", "utf8"))![1]!;
  return join(line.split(" ")[4]!, own);
}

/** Starts `count` escapes of every kind inside one background or foreground command. */
const ESCAPES = (m: string) => `env -u AGENT_SHELL_OWNER setsid -f sleep ${m}; setsid sleep ${m} & nohup sleep ${m} >/dev/null 2>&1 & (sleep ${m} &) ;`;
/** The sleeps themselves (not the shells and subshells whose command lines also name them, which come and go). */
const sleeps = (marker: string) => processesMatching(`sleep ${marker}`).filter((p) => p.cmdline === `sleep ${marker}`);
const started = async (marker: string, n: number) => {
  const deadline = Date.now() + 5000;
  while (sleeps(marker).length < n && Date.now() < deadline) await Bun.sleep(20);
  expect(sleeps(marker).length).toBeGreaterThanOrEqual(n);
};

let s: McpSession;
let home: string;
beforeAll(async () => {
  home = cgroupHome();
  s = await startServer({ args: ["--sandbox", "off"] });
});
afterAll(async () => {
  await s?.close();
});

describe("everything a task started dies with it, whatever left its group", () => {
  test("kill_shell", async () => {
    const m = uniqueSleep(420);
    const { task_id } = await s.call("bash", { command: `${ESCAPES(m)} sleep ${m}`, run_in_background: true });
    await started(m, 5);
    expect((await s.call("kill_shell", { task_id })).status).toBe("killed");
    expect(await waitNoProcess(`sleep ${m}`, 1000)).toEqual([]);
  });

  test("a foreground timeout", async () => {
    const m = uniqueSleep(421);
    const r = await s.call("bash", { command: `${ESCAPES(m)} sleep ${m}`, timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(await waitNoProcess(`sleep ${m}`, 1000)).toEqual([]);
  });

  test("a background readiness timeout", async () => {
    const m = uniqueSleep(422);
    const r = await s.call("bash", { command: `${ESCAPES(m)} sleep ${m}`, run_in_background: true, ready_pattern: "never-printed", ready_timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(await waitNoProcess(`sleep ${m}`, 1000)).toEqual([]);
  });

  test("a leader that exits at once: every escape is in the task its leftovers became, and dies with it", async () => {
    const m = uniqueSleep(423);
    const r = await s.call("bash", { command: `${ESCAPES(m)} echo done` });
    expect(r.stdout).toBe("done\n");
    await started(m, 4);
    expect((await s.call("kill_shell", { task_id: r.left_running.task_id })).status).toBe("killed");
    expect(await waitNoProcess(`sleep ${m}`, 1000)).toEqual([]);
  });

  test("stdin EOF (the client goes away)", async () => {
    const t = await startServer({ args: ["--sandbox", "off"] });
    const m = uniqueSleep(424);
    try {
      await t.call("bash", { command: `${ESCAPES(m)} sleep ${m}`, run_in_background: true });
      await started(m, 5);
    } finally {
      await t.close();
    }
    expect(await waitNoProcess(`sleep ${m}`, 2000)).toEqual([]);
  });

  test("SIGKILL of the server: gone within 2 s, and its cgroups removed", async () => {
    const t = await startServer({ args: ["--sandbox", "off"] });
    try {
      const m = uniqueSleep(425);
      await t.call("bash", { command: `${ESCAPES(m)} sleep ${m}`, run_in_background: true });
      await started(m, 5);
      const folder = join(home, `agent-shell-${t.pid}`);
      expect(existsSync(folder)).toBe(true);
      process.kill(t.pid, "SIGKILL");
      await waitForExit(t.pid, 3000);
      expect(await waitNoProcess(`sleep ${m}`, 2000)).toEqual([]);
      const deadline = Date.now() + 2000;
      while (existsSync(folder) && Date.now() < deadline) await Bun.sleep(20);
      expect(existsSync(folder)).toBe(false);
    } finally {
      await t.close().catch(() => {});
    }
  });
});

describe("cgroups do not pile up", () => {
  test("a server removes the empty folders of hosts that died without removing theirs, nested ones included, and no other", async () => {
    // Stand-ins made by this test: the folder of a host whose pid is dead (with an empty task
    // cgroup, holding the folder an agent-shell run as that task left), and one named after
    // this test process, which is alive.
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    const dead = join(home, `agent-shell-${gone.pid}`);
    const living = join(home, `agent-shell-${process.pid}`);
    const nested = join(dead, "task-1", `agent-shell-${gone.pid + 1}`, "task-2");
    mkdirSync(nested, { recursive: true });
    mkdirSync(living, { recursive: true }); // (a folder of this pid may be left from an earlier run: pids wrap)
    const t = await startServer({ args: ["--sandbox", "off"] });
    try {
      await t.call("bash", { command: "true" }); // the first task makes the server's own folder
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(living)).toBe(true);
    } finally {
      await t.close();
      for (const dir of [nested, dirname(nested), join(dead, "task-1"), dead]) if (existsSync(dir)) rmdirSync(dir);
      // This process's own folder may also be in use: a library test here keeps empty task cgroups in it for its next tasks.
      try {
        rmdirSync(living);
      } catch {}
    }
  });

  test("a finished task's cgroup is emptied and kept for the next (a few at most) or removed; the server's folder goes when it exits", async () => {
    const t = await startServer({ args: ["--sandbox", "off"] });
    const folder = join(home, `agent-shell-${t.pid}`);
    try {
      for (let i = 0; i < 5; i++) await t.call("bash", { command: "true" });
      const bg = await t.call("bash", { command: "true", run_in_background: true });
      await t.call("task_output", { task_id: bg.task_id, wait: true });
      // Empty, kept for the next tasks (SpareCgroups: 4 at most).
      const left = readdirSync(folder).filter((d) => d.startsWith("task-"));
      expect(left.length).toBeLessThanOrEqual(4);
      for (const d of left) expect(readFileSync(join(folder, d, "cgroup.procs"), "utf8")).toBe("");
    } finally {
      await t.close();
    }
    expect(existsSync(folder)).toBe(false);
  });
});
