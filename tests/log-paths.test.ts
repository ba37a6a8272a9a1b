/** SPEC §14: stdout_path and stderr_path in every task_output of a local background task, from its start. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { startServer, type McpSession } from "./helpers/mcp.ts";

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
