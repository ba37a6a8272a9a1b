import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alive, BINARY, type McpSession, startServer } from "../helpers/mcp.ts";
import { processes, processesMatching, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

// Real processes and servers: more than bun's 5 s default.
setDefaultTimeout(60_000);

const freshDir = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

describe("spool: the full output on disk while memory stays bounded", () => {
  test("50 MB with a 1 MB memory buffer: log file byte-identical, middle range readable", async () => {
    const s = await startServer();
    try {
      // Deterministic text: numbered lines, ~50 MB.
      const cmd = `python3 -c "import sys
w = sys.stdout.write
for i in range(1600000): w('line %09d abcdefghijklmnop\\n' % i)"`;
      const r = await s.call("bash", { command: cmd, run_in_background: true });
      const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 60 });
      expect(out.status).toBe("completed");
      const expected = Array.from({ length: 1600000 }, (_, i) => `line ${String(i).padStart(9, "0")} abcdefghijklmnop\n`).join("");
      expect(out.stdout_total_bytes).toBe(expected.length);
      expect(out.stdout_truncated).toBe(true);
      const file = readFileSync(out.stdout_path);
      const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
      expect(sha(file)).toBe(sha(expected));
      const mid = 25_000_003;
      const range = await s.call("task_output", { task_id: r.task_id, offset: mid, length: 1000 });
      expect(range.stdout).toBe(expected.slice(mid, mid + 1000));
      const errRange = await s.call("task_output", { task_id: r.task_id, offset: 0, length: 10, stream: "stderr" });
      expect(errRange.stderr).toBe("");
      expect(out.stdout_path).toBe(join(s.stateDir, "owners", readdirSync(join(s.stateDir, "owners"))[0]!, "tasks", r.task_id, "stdout.log"));
    } finally {
      await s.close();
    }
  }, 120_000);
});

describe("no orphans", () => {
  test("kill -9 of the server: every process group it started is gone within 2 s", async () => {
    const secs = uniqueSleep();
    const s = await startServer();
    await s.call("bash", { command: `sleep ${secs}`, run_in_background: true });
    await s.call("bash", { command: `bash -c 'sleep ${secs} & sleep ${secs}'`, run_in_background: true });
    await s.call("bash", { command: `sleep ${secs}; echo never`, run_in_background: true });
    // four sleeps (plus the bash processes whose command lines name them), once all have started
    const sleeps = () => processesMatching(`sleep ${secs}`).filter((p) => p.cmdline === `sleep ${secs}`).length;
    const deadline = Date.now() + 3000;
    while (sleeps() < 4 && Date.now() < deadline) await Bun.sleep(10);
    expect(sleeps()).toBe(4);
    process.kill(s.pid, "SIGKILL");
    expect(await waitNoProcess(`sleep ${secs}`, 2000)).toEqual([]);
    await s.close();
  });

  // The watchdog's passes after a crash are spread over pauses of 0.05, 0.2 and 0.5 s (a spawn
  // caught mid-exec is marked only after its exec); after a clean close one pass does.
  /** The pauses (`sleep N` children) the watchdog takes once its server is gone, until it leaves. */
  async function watchdogPausesAfter(end: (s: McpSession) => Promise<unknown>): Promise<string[]> {
    const s = await startServer();
    try {
      await s.call("bash", { command: "true" });
      const [dog] = processes().filter((p) => p.ppid === s.pid && p.cmdline.includes("agent-shell-watchdog"));
      expect(dog).toBeDefined();
      await end(s);
      const seen = new Set<string>();
      // Its children's command lines, read until it exits (each pause but the first lasts 50 ms or more).
      while (alive(dog!.pid)) {
        for (const p of processes()) if (p.ppid === dog!.pid && p.cmdline.startsWith("sleep ")) seen.add(p.cmdline);
        await Bun.sleep(5);
      }
      return [...seen].sort();
    } finally {
      await s.close();
    }
  }

  test("a clean close: the watchdog makes one pass and leaves, without the crash passes", async () => {
    expect((await watchdogPausesAfter((s) => s.close())).filter((c) => c !== "sleep 0")).toEqual([]);
  });

  test("a SIGKILLed server: the watchdog still makes all its passes", async () => {
    expect(await watchdogPausesAfter(async (s) => process.kill(s.pid, "SIGKILL"))).toEqual(expect.arrayContaining(["sleep 0.2", "sleep 0.5"]));
  });

  test("a private server started after a SIGKILLed one sweeps its leftovers", async () => {
    const stateDir = freshDir("as-sweep-");
    try {
      const secs = uniqueSleep();
      const a = await startServer({ stateDir });
      await a.call("bash", { command: `sleep ${secs}`, run_in_background: true });
      // The sleep has started (a sandboxed spawn takes a few ms to reach its exec).
      const started = Date.now() + 3000;
      while (processesMatching(`sleep ${secs}`).length === 0 && Date.now() < started) await Bun.sleep(10);
      // Kill the server and its watchdog together, as a crash of the whole tree would.
      const watchdogs = processes().filter((p) => p.ppid === a.pid && p.cmdline.includes("agent-shell-watchdog"));
      expect(watchdogs.length).toBe(1);
      process.kill(a.pid, "SIGSTOP");
      for (const w of watchdogs) process.kill(w.pid, "SIGKILL");
      process.kill(a.pid, "SIGKILL");
      await a.close();
      expect(processesMatching(`sleep ${secs}`).length).toBe(1);
      expect(readdirSync(join(stateDir, "owners")).length).toBe(1);
      const b = await startServer({ stateDir });
      expect(await waitNoProcess(`sleep ${secs}`, 1000)).toEqual([]);
      expect(readdirSync(join(stateDir, "owners")).length).toBe(1); // only b's own folder
      await b.close();
      expect(readdirSync(join(stateDir, "owners"))).toEqual([]);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe("meta.json", () => {
  test("follows every transition: running from the start, killed when kill_shell answers, completed when task_output sees the end", async () => {
    const s = await startServer();
    const secs = uniqueSleep();
    try {
      const meta = (id: string) => {
        const owner = readdirSync(join(s.stateDir, "owners"))[0]!;
        return JSON.parse(readFileSync(join(s.stateDir, "owners", owner, "tasks", id, "meta.json"), "utf8"));
      };
      const long = await s.call("bash", { command: `sleep ${secs}`, run_in_background: true });
      await s.call("task_output", { task_id: long.task_id });
      expect(meta(long.task_id).status).toBe("running");
      expect((await s.call("kill_shell", { task_id: long.task_id })).status).toBe("killed");
      expect(meta(long.task_id).status).toBe("killed");
      const short = await s.call("bash", { command: "exit 3", run_in_background: true });
      expect((await s.call("task_output", { task_id: short.task_id, wait: true })).exit_code).toBe(3);
      expect(meta(short.task_id)).toMatchObject({ status: "completed", exit_code: 3 });
      expect(meta(short.task_id).ended_at).toBeString();
      // The killed task's exit, once it arrives, is recorded too.
      await s.call("task_output", { task_id: long.task_id, wait: true });
      expect(meta(long.task_id)).toMatchObject({ status: "killed", signal: "SIGTERM" });
    } finally {
      await s.close();
    }
    expect(await waitNoProcess(`sleep ${secs}`, 500)).toEqual([]);
  });
});

describe("persistent registry (mcp --persist)", () => {
  test("recovers after SIGSTOP+SIGKILL of server and watchdog: running stays killable, dead is lost with log, ids continue; a second live one is refused", async () => {
    const stateDir = freshDir("as-persist-");
    const work = freshDir("as-persist-cwd-"); // where the task's commands see the test's file
    const secs = uniqueSleep();
    try {
      const a = await startServer({ stateDir, cwd: work, args: ["--persist"] });
      const alive = await a.call("bash", { command: `sleep ${secs}`, run_in_background: true });
      // It ends when the test says so (a file appears), after its server is gone.
      const go = join(work, `go-${secs}`);
      const dies = await a.call("bash", { command: `echo last words; until [ -e ${go} ]; do sleep 0.05; done`, run_in_background: true });
      await a.call("task_output", { task_id: dies.task_id, wait: false });

      // A second live persistent registry on the same folder is refused, naming lock and pid.
      const second = Bun.spawn([BINARY, "mcp", "--persist", "--state-dir", stateDir], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
      expect(await second.exited).not.toBe(0);
      const message = await new Response(second.stderr).text();
      expect(message).toContain(join(stateDir, "owner.lock"));
      expect(message).toContain(String(a.pid));

      const watchdogs = processes().filter((p) => p.ppid === a.pid && p.cmdline.includes("agent-shell-watchdog"));
      process.kill(a.pid, "SIGSTOP");
      for (const w of watchdogs) process.kill(w.pid, "SIGKILL");
      process.kill(a.pid, "SIGKILL");
      await a.close();
      // Let the short task end while nobody owns it.
      writeFileSync(go, "");
      expect(await waitNoProcess(go, 10_000)).toEqual([]);

      const b = await startServer({ stateDir, args: ["--persist"] });
      try {
        const list = (await b.call("task_list", {})).tasks;
        expect(list.map((t: { task_id: string; status: string }) => [t.task_id, t.status])).toEqual([
          [alive.task_id, "running"],
          [dies.task_id, "lost"],
        ]);
        const lost = await b.call("task_output", { task_id: dies.task_id });
        expect(lost.status).toBe("lost");
        expect(JSON.parse(readFileSync(join(stateDir, "tasks", dies.task_id, "meta.json"), "utf8")).status).toBe("lost");
        expect(lost.lost_reason).toBeString();
        expect(lost.stdout).toBe("last words\n");
        const next = await b.call("bash", { command: "true", run_in_background: true });
        expect(next.task_id).toBe("bg-3");
        expect(await b.call("kill_shell", { task_id: alive.task_id })).toEqual({ task_id: alive.task_id, task_type: "background", status: "killed", success: true });
        expect(await waitNoProcess(`sleep ${secs}`, 500)).toEqual([]);
      } finally {
        await b.close();
      }
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe("expiry", () => {
  test("task_ttl_seconds: a finished task leaves task_list and its logs leave the disk", async () => {
    const s = await startServer({ env: { AGENT_SHELL_TASK_TTL_SECONDS: "1" } });
    try {
      const r = await s.call("bash", { command: "echo bye", run_in_background: true });
      const out = await s.call("task_output", { task_id: r.task_id, wait: true });
      expect(existsSync(out.stdout_path)).toBe(true);
      const deadline = Date.now() + 5000;
      while ((await s.call("task_list", {})).tasks.length && Date.now() < deadline) await Bun.sleep(100);
      expect((await s.call("task_list", {})).tasks).toEqual([]);
      expect(existsSync(out.stdout_path)).toBe(false);
      expect((await s.call("task_output", { task_id: r.task_id })).error_code).toBe("NOT_FOUND");
    } finally {
      await s.close();
    }
  });

  test("max_finished_tasks evicts the oldest finished first; running tasks stay", async () => {
    const secs = uniqueSleep();
    const s = await startServer({ env: { AGENT_SHELL_MAX_FINISHED_TASKS: "2" } });
    try {
      const running = await s.call("bash", { command: `sleep ${secs}`, run_in_background: true });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await s.call("bash", { command: `echo ${i}`, run_in_background: true });
        await s.call("task_output", { task_id: r.task_id, wait: true });
        ids.push(r.task_id);
      }
      const listed = (await s.call("task_list", {})).tasks.map((t: { task_id: string }) => t.task_id);
      expect(listed).toEqual([running.task_id, ids[2], ids[3]]);
    } finally {
      await s.close();
    }
  });
});
