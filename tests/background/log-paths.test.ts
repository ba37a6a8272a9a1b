/** SPEC §14: stdout_path and stderr_path in every task_output of a local background task, from its start. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";

let s: McpSession;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.close();
});

test("a silent running task and a finished one with no output both name their (empty) log files", async () => {
  const running = await s.call("bash", { command: "sleep 30", run_in_background: true });
  const quiet = await s.call("task_output", { task_id: running.task_id });
  for (const stream of ["stdout", "stderr"]) {
    expect(quiet[`${stream}_path`]).toEndWith(`/${running.task_id}/${stream}.log`);
    expect(readFileSync(quiet[`${stream}_path`], "utf8")).toBe("");
  }
  await s.call("kill_shell", { task_id: running.task_id });

  const done = await s.call("bash", { command: "true", run_in_background: true });
  const ended = await s.call("task_output", { task_id: done.task_id, wait: true });
  expect(ended.exit_code).toBe(0);
  expect(existsSync(ended.stdout_path)).toBe(true);
  expect(existsSync(ended.stderr_path)).toBe(true);
});

test("tasks started in a burst: each log file exists when task_output names it and holds every byte, in order", async () => {
  // The files are made off the event loop while the processes start: output that comes
  // first waits in memory and must reach the file complete and in order.
  const lines = 2000;
  const command = `for i in $(seq 1 ${lines}); do echo "line $i"; echo "err $i" >&2; done`;
  const started = await Promise.all(Array.from({ length: 30 }, () => s.call("bash", { command, run_in_background: true })));
  const expected = (word: string) => Array.from({ length: lines }, (_, i) => `${word} ${i + 1}\n`).join("");
  for (const t of started) {
    const now = await s.call("task_output", { task_id: t.task_id });
    expect(existsSync(now.stdout_path)).toBe(true);
    expect(existsSync(now.stderr_path)).toBe(true);
    const ended = await s.call("task_output", { task_id: t.task_id, wait: true });
    expect(ended.exit_code).toBe(0);
    expect(readFileSync(ended.stdout_path, "utf8")).toBe(expected("line"));
    expect(readFileSync(ended.stderr_path, "utf8")).toBe(expected("err"));
  }
});

test("silent tasks started in a burst, past the folders made ahead: logs made off the event loop exist, private, when task_output first names them; no fd stays open", async () => {
  const fds = () => readdirSync(`/proc/${s.pid}/fd`).length;
  const before = fds();
  // Some end before their folder is made: their log files are made (empty) and closed all the same.
  const started = await Promise.all(Array.from({ length: 40 }, (_, i) => s.call("bash", { command: i % 2 ? "true" : "sleep 0.3", run_in_background: true })));
  const outputs = await Promise.all(started.map((t) => s.call("task_output", { task_id: t.task_id })));
  for (const out of outputs) {
    expect(statSync(dirname(out.stdout_path)).mode & 0o777).toBe(0o700);
    for (const stream of ["stdout", "stderr"]) {
      expect(statSync(out[`${stream}_path`]).mode & 0o777).toBe(0o600);
      expect(readFileSync(out[`${stream}_path`], "utf8")).toBe("");
    }
  }
  for (const t of started) expect((await s.call("task_output", { task_id: t.task_id, wait: true })).exit_code).toBe(0);
  const deadline = Date.now() + 3000;
  while (fds() > before + 4 && Date.now() < deadline) await Bun.sleep(20);
  expect(fds()).toBeLessThanOrEqual(before + 4); // a spawner's and a task cgroup's fds may come and go
});

/** The `.spare-*` folders in `tasksDir` once at least one is there (they are made once the server is quiet), with their inodes. */
async function sparesIn(tasksDir: string): Promise<Map<number, string>> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const names = existsSync(tasksDir) ? readdirSync(tasksDir).filter((n) => n.startsWith(".spare-")) : [];
    if (names.length || Date.now() > deadline) return new Map(names.map((n) => [statSync(join(tasksDir, n)).ino, n]));
    await Bun.sleep(10);
  }
}

test("a start after a quiet moment gets a folder made ahead, renamed into place: private, its logs empty, then complete", async () => {
  const first = await s.call("task_output", { task_id: (await s.call("bash", { command: "true", run_in_background: true })).task_id, wait: true });
  const tasksDir = dirname(dirname(first.stdout_path));
  const spares = await sparesIn(tasksDir);
  expect(spares.size).toBeGreaterThan(0);
  const started = await s.call("bash", { command: "read line; echo \"got $line\"; echo err >&2", run_in_background: true, keep_stdin_open: true });
  const folder = join(tasksDir, started.task_id);
  expect(spares.has(statSync(folder).ino)).toBe(true);
  expect(statSync(folder).mode & 0o777).toBe(0o700);
  for (const name of ["stdout.log", "stderr.log"]) {
    expect(statSync(join(folder, name)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(folder, name), "utf8")).toBe("");
  }
  await s.call("write_stdin", { task_id: started.task_id, chars: "hello\n" });
  const ended = await s.call("task_output", { task_id: started.task_id, wait: true });
  expect(ended.stdout_path).toBe(join(folder, "stdout.log"));
  expect(readFileSync(ended.stdout_path, "utf8")).toBe("got hello\n");
  expect(readFileSync(ended.stderr_path, "utf8")).toBe("err\n");
});

test("a persistent registry: spares left by one that was killed are removed at the next start and are never tasks", async () => {
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-spares-")));
  try {
    const a = await startServer({ stateDir, args: ["--persist"] });
    await a.call("task_output", { task_id: (await a.call("bash", { command: "true", run_in_background: true })).task_id, wait: true });
    expect((await sparesIn(join(stateDir, "tasks"))).size).toBeGreaterThan(0);
    process.kill(a.pid, "SIGKILL");
    await a.close();
    const b = await startServer({ stateDir, args: ["--persist"] });
    try {
      expect(readdirSync(join(stateDir, "tasks")).filter((n) => n.startsWith(".spare-"))).toEqual([]);
      expect((await b.call("task_list", {})).tasks.map((t: { task_id: string }) => t.task_id)).toEqual(["bg-1"]);
    } finally {
      await b.close();
    }
    // A clean exit leaves no spare behind either.
    expect(readdirSync(join(stateDir, "tasks")).filter((n) => n.startsWith(".spare-"))).toEqual([]);
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
});
