/**
 * task_list as the work grows (SPEC §18): the agent's own tasks only, within the budget
 * whatever their number, newest first, counts by status when not all fit, narrowed by
 * `status`, `name` and `limit`; tasks/list and multi-task task_output likewise bounded.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

const N = 120;
let s: McpSession;
const marker = uniqueSleep(300);
const ids: string[] = [];

beforeAll(async () => {
  s = await startServer();
  // Started together, as an agent's burst would: every start answered with its own id.
  const started = await Promise.all(
    Array.from({ length: N }, (_, i) => s.call("bash", { command: `sleep ${marker} # task ${i}`, run_in_background: true, ...(i % 40 === 0 ? { name: `web-${i}` } : {}) })),
  );
  for (const r of started) ids.push(r.task_id);
  ids.sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)));
}, 60_000);

afterAll(async () => {
  await Promise.all(ids.map((task_id) => s.call("kill_shell", { task_id })));
  await s.close();
  expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
}, 60_000);

const size = (r: unknown) => Buffer.byteLength(JSON.stringify(r));

describe("task_list as the work grows", () => {
  test(`${N} running tasks: none lost; the list fits the 8,000-byte budget, newest last in id order, and states the counts`, async () => {
    expect(new Set(ids).size).toBe(N);
    const r = await s.call("task_list", {});
    expect(size(r)).toBeLessThanOrEqual(8000);
    expect(r.total).toBe(N);
    expect(r.counts).toEqual({ running: N, completed: 0, killed: 0, lost: 0 });
    expect(r.note).toContain(`newest of ${N} tasks shown; narrow with status, name or limit`);
    const shown = r.tasks.map((t: any) => t.task_id);
    expect(shown.length).toBeGreaterThan(10);
    expect(shown).toEqual(ids.slice(-shown.length)); // the newest, in id order
    // Defaults are left out of each entry; the server's sandbox is said once.
    for (const t of r.tasks) expect(Object.keys(t)).not.toContainAnyValues(["tty", "restarts", "sandbox", "sandbox_level"]);
    expect(r.sandbox).toBe("workspace-write");
  });

  test("`limit` gives the newest N, and says how many there are", async () => {
    const r = await s.call("task_list", { limit: 3 });
    expect(r.tasks.map((t: any) => t.task_id)).toEqual(ids.slice(-3));
    expect(r.total).toBe(N);
    expect(r.note).toBe(`3 newest of ${N} tasks shown`);
  });

  test("`name` narrows to a service name, `*` matching any text; a list that fits has no summary", async () => {
    const r = await s.call("task_list", { name: "web-*" });
    expect(r.tasks.map((t: any) => t.name)).toEqual(["web-0", "web-40", "web-80"]);
    expect(r.total).toBeUndefined();
    expect(r.counts).toBeUndefined();
    expect((await s.call("task_list", { name: "web-40" })).tasks.map((t: any) => t.name)).toEqual(["web-40"]);
    expect((await s.call("task_list", { name: "web" })).tasks).toEqual([]);
  });

  test("`status: finished` lists none of the running ones; `max_output_bytes` widens the list", async () => {
    expect((await s.call("task_list", { status: "finished" })).tasks).toEqual([]);
    const all = await s.call("task_list", { max_output_bytes: 100_000 });
    expect(all.tasks.length).toBe(N);
    expect(all.total).toBeUndefined();
  });

  test("tasks/list pages through them within the budget", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await s.client.experimental.tasks.listTasks(cursor);
      expect(size(page)).toBeLessThanOrEqual(8000);
      seen.push(...page.tasks.map((t) => t.taskId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(ids);
  });

  test("task_output of all of them fits too: whole results first, then statuses, counted", async () => {
    const r = await s.call("task_output", { task_ids: ids });
    expect(size(r)).toBeLessThanOrEqual(8000 + 500 * 20 + 20 * N);
    expect(r.results[0]).toMatchObject({ task_id: ids[0], status: "running", stdout: "" });
    const brief = r.results.filter((x: any) => x.stdout === undefined);
    expect(brief.length).toBeGreaterThan(0);
    expect(brief[0]).toEqual({ task_id: expect.any(String), status: "running" });
    const left = N - r.results.length;
    if (left > 0) expect(r.omitted).toEqual({ running: left });
    expect(r.note).toContain("read each with task_output {task_id}");
  });
});

describe("task_list lists what the agent started", () => {
  test("a foreground result's kept output (output_task_id) is readable but not listed as a task", async () => {
    const t = await startServer();
    try {
      const fg = await t.call("bash", { command: "seq 1 200000" });
      expect(fg.output_task_id).toMatch(/^bg-\d+$/);
      expect((await t.call("task_output", { task_id: fg.output_task_id, offset: 0, length: 6 })).stdout).toBe("1\n2\n3\n");
      const bg = await t.call("bash", { command: "true", run_in_background: true });
      const listed = (await t.call("task_list", {})).tasks.map((x: any) => x.task_id);
      expect(listed).toEqual([bg.task_id]);
      expect((await t.client.experimental.tasks.listTasks()).tasks.map((x) => x.taskId)).toEqual([bg.task_id]);
    } finally {
      await t.close();
    }
  });
});
