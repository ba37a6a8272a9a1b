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
