/** SPEC §14: max_finished_tasks never drops a result no client has read; read ones go first. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type McpSession } from "../helpers/mcp.ts";

let s: McpSession;
beforeAll(async () => {
  s = await startServer({ env: { AGENT_SHELL_MAX_FINISHED_TASKS: "5" } });
});
afterAll(async () => {
  await s?.close();
});

test("20 unread finished tasks all answer with their exit code; read ones are evicted first", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push((await s.call("bash", { command: `exit ${i % 7}`, run_in_background: true })).task_id);
  // Wait for all 20 to end through their task_finished notices: reading would count as a read.
  const deadline = Date.now() + 20_000;
  const ended = () => new Set(s.notices.filter((n) => n.event === "task_finished").map((n) => n.task_id));
  while (ids.some((id) => !ended().has(id)) && Date.now() < deadline) await Bun.sleep(20);
  expect(ids.filter((id) => !ended().has(id))).toEqual([]);

  // The first read of each answers with its exit code, although 20 > max_finished_tasks.
  const first = ids.slice(0, 3);
  for (const [i, id] of first.entries()) expect(await s.call("task_output", { task_id: id })).toMatchObject({ status: "completed", exit_code: i % 7 });
  // Those three were read: over the cap, they are the ones that went.
  for (const id of first) expect((await s.call("task_output", { task_id: id })).error_code).toBe("NOT_FOUND");
  // Every unread one is still there, with its exit code.
  for (const [i, id] of ids.entries()) {
    if (first.includes(id)) continue;
    expect(await s.call("task_output", { task_id: id })).toMatchObject({ status: "completed", exit_code: i % 7 });
  }
});
