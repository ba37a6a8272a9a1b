/**
 * SPEC §25: what a foreground command leaves running is not killed silently. It becomes a
 * background task (`left_running`), readable with task_output, listed by task_list, ended by
 * kill_shell; with `foreground_leftovers = "kill"` the result says what was ended
 * (`left_running_killed`); a timed-out call still ends everything. Background results carry
 * `sandbox_pid`, the pid commands in the sandbox see, and `kill <sandbox_pid>` from a later
 * command reaches the task.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { processesMatching, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

// Real processes on a shared 2-core machine.
setDefaultTimeout(30_000);

let s: McpSession;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
});

const PYTHON = "/usr/bin/python3";

/** A TCP port nothing listens on now. */
function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/** The first successful GET of `url` (the server starts after the call returns), or the last error after `ms`. */
async function getWhenUp(url: string, ms = 10_000): Promise<Response> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fetch(url);
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await Bun.sleep(50);
    }
  }
}

describe("foreground_leftovers = adopt (the default)", () => {
  test("`python3 -m http.server PORT &`: left_running names it, it answers, task_list and task_output see it, kill_shell ends it", async () => {
    const port = freePort();
    const marker = `http.server ${port}`;
    // The interpreter itself (a version manager's `python3` shim would be its own process for a while).
    const r = await s.call("bash", { command: `${PYTHON} -u -m http.server ${port} --bind 127.0.0.1 & echo launched` });
    try {
      expect(r.exit_code).toBe(0);
      expect(r.success).toBe(true);
      expect(r.stdout).toContain("launched");
      expect(r.left_running.task_id).toMatch(/^bg-\d+$/);
      expect(r.left_running.commands).toEqual([`${PYTHON} -u -m http.server ${port} --bind 127.0.0.1`]);
      expect(r.left_running.pids).toEqual(processesMatching(marker).map((p) => p.pid));
      if (r.sandbox_level === "namespaces") expect(r.left_running.sandbox_pids).toHaveLength(1);

      const res = await getWhenUp(`http://127.0.0.1:${port}/`);
      expect(res.status).toBe(200);
      await res.text();

      const list = await s.call("task_list", {});
      const entry = list.tasks.find((t: { task_id: string }) => t.task_id === r.left_running.task_id);
      expect(entry.status).toBe("running");
      // What it writes after the call returned is the task's output (the request's log line).
      const deadline = Date.now() + 5000;
      let out = await s.call("task_output", { task_id: r.left_running.task_id });
      while (!String(out.stderr ?? "").includes('"GET / HTTP') && Date.now() < deadline) out = await s.call("task_output", { task_id: r.left_running.task_id, wait: true, timeout: 1 });
      expect(out.status).toBe("running");
      expect(out.stderr).toContain('"GET / HTTP');

      const killed = await s.call("kill_shell", { task_id: r.left_running.task_id });
      expect(killed.status).toBe("killed");
      expect(await waitNoProcess(marker, 3000)).toEqual([]);
    } finally {
      for (const p of processesMatching(marker)) process.kill(p.pid, "SIGKILL");
    }
  });

  test("the kept task ends by itself when its leftovers do, with their later output and the command's exit code", async () => {
    // The leftover waits for a file the test makes once the call has answered: the call cannot have waited for it.
    const r = await s.call("bash", { command: "(until [ -e go ]; do sleep 0.05; done; echo later) & echo now; exit 3" });
    expect(r.exit_code).toBe(3);
    expect(r.stdout).toBe("now\n");
    writeFileSync(join(s.cwd, "go"), "");
    const done = await s.call("task_output", { task_id: r.left_running.task_id, wait: true, timeout: 10, only_new: true });
    expect(done.status).toBe("completed");
    expect(done.exit_code).toBe(3);
    expect(done.stdout).toBe("later\n"); // what the result showed counts as read
    expect((await s.call("task_output", { task_id: r.left_running.task_id })).stdout).toBe("now\nlater\n");
  });

  test("what it left running stays guarded: a git plant it makes after the call returned is disarmed and reported by its task", async () => {
    const repo = join(s.cwd, "repo");
    mkdirSync(repo);
    expect(Bun.spawnSync(["git", "init", "-q", repo]).exitCode).toBe(0);
    const go = join(repo, "go");
    const r = await s.call("bash", {
      command: `(while [ ! -e go ]; do sleep 0.05; done; git config core.fsmonitor 'touch planted; false') & echo bye`,
      working_directory: repo,
    });
    expect(r.stdout).toBe("bye\n");
    writeFileSync(go, ""); // now the leftover writes the key
    const done = await s.call("task_output", { task_id: r.left_running.task_id, wait: true, timeout: 10 });
    expect(done.status).toBe("completed");
    expect(done.git_disarmed.map((d: { key: string }) => d.key)).toEqual(["core.fsmonitor"]);
    expect(Bun.spawnSync(["git", "-C", repo, "config", "core.fsmonitor"]).exitCode).not.toBe(0);
  });

  test("the server's shutdown ends what a call left running, as every task", async () => {
    const t = await startServer();
    const m = uniqueSleep(313);
    try {
      const r = await t.call("bash", { command: `setsid sleep ${m} >/dev/null 2>&1 & echo started` });
      expect(r.left_running.task_id).toMatch(/^bg-\d+$/);
      expect(processesMatching(`sleep ${m}`).length).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
    expect(await waitNoProcess(`sleep ${m}`, 3000)).toEqual([]);
  });

  test("a command that leaves nothing running has no left_running", async () => {
    const r = await s.call("bash", { command: "sleep 0.01 & wait; echo ok" });
    expect(r.stdout).toBe("ok\n");
    expect(r).not.toHaveProperty("left_running");
    expect(r).not.toHaveProperty("left_running_killed");
  });

  test("a timed-out call still ends everything, what it had started in the background too", async () => {
    const m = uniqueSleep(310);
    const r = await s.call("bash", { command: `sleep ${m} >/dev/null 2>&1 & sleep ${m}`, timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(r.context).not.toHaveProperty("left_running");
    expect(await waitNoProcess(`sleep ${m}`, 3000)).toEqual([]);
    const list = await s.call("task_list", { status: "running" });
    expect(list.tasks.filter((t: { command: string }) => t.command.includes(m))).toEqual([]);
  });
});

describe("foreground_leftovers = kill", () => {
  let k: McpSession;
  beforeAll(async () => {
    k = await startServer({ env: { AGENT_SHELL_FOREGROUND_LEFTOVERS: "kill" } });
  });
  afterAll(async () => {
    await k.close();
  });

  test("the result names what was ended (left_running_killed), and nothing is left", async () => {
    const m = uniqueSleep(311);
    const r = await k.call("bash", { command: `sleep ${m} >/dev/null 2>&1 & echo started` });
    expect(r.stdout).toBe("started\n");
    expect(r).not.toHaveProperty("left_running");
    // (Caught as it was: the sleep, or the shell that forked it, just before its exec.)
    expect(r.left_running_killed.commands).toHaveLength(1);
    expect(r.left_running_killed.commands[0]).toContain(`sleep ${m}`);
    expect(r.left_running_killed.pids).toHaveLength(1);
    expect(await waitNoProcess(`sleep ${m}`, 3000)).toEqual([]);
    expect((await k.call("task_list", {})).tasks).toEqual([]);
  });
});

describe("sandbox_pid", () => {
  test("a background result and its task_list entry carry the pid commands see; `kill <sandbox_pid>` from a later command ends the task", async () => {
    const m = uniqueSleep(312);
    const bg = await s.call("bash", { command: `sleep ${m}`, run_in_background: true });
    try {
      if (bg.sandbox_level !== "namespaces") {
        // No pid namespace: commands see the same pid.
        expect(bg).not.toHaveProperty("sandbox_pid");
        return;
      }
      expect(bg.sandbox_pid).toBeGreaterThan(0);
      expect(bg.sandbox_pid).not.toBe(bg.pid);
      const entry = (await s.call("task_list", {})).tasks.find((t: { task_id: string }) => t.task_id === bg.task_id);
      expect(entry.sandbox_pid).toBe(bg.sandbox_pid);
      // The sandbox's own view agrees: that pid is the sleep.
      const seen = await s.call("bash", { command: `cat /proc/${bg.sandbox_pid}/cmdline | tr '\\0' ' '` });
      expect(seen.stdout.trim()).toBe(`sleep ${m}`);
      // (`kill` asks first: the model confirms here.)
      expect((await s.call("bash", { command: `kill ${bg.sandbox_pid}` })).needs_confirmation).toBe(true);
      const kill = await s.call("bash", { command: `kill ${bg.sandbox_pid}`, confirmed: true });
      expect(kill.exit_code).toBe(0);
      const out = await s.call("task_output", { task_id: bg.task_id, wait: true, timeout: 10 });
      expect(out.status).toBe("completed");
      expect(out.signal).toBe("SIGTERM");
      expect(await waitNoProcess(`sleep ${m}`, 3000)).toEqual([]);
    } finally {
      await s.call("kill_shell", { task_id: bg.task_id });
    }
  });
});
