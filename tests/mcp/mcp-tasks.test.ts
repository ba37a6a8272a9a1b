/**
 * SPEC §12 MCP tasks (protocol 2025-11-25): a task-augmented tools/call becomes a registry
 * background task (taskId = bg-N) answered at once; tasks/get maps the statuses,
 * tasks/result waits and gives the foreground result, tasks/cancel kills the group,
 * tasks/list lists, notifications/tasks/status reports the end, and the same ids work with
 * task_output, kill_shell and task_list. Driven with the official SDK client.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { processesMatching, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

setDefaultTimeout(60_000);

let s: McpSession;
/** Status notifications by task id, each waiter resolved when its task's terminal status arrives. */
const statuses = new Map<string, string[]>();
const waiters = new Map<string, (status: string) => void>();

beforeAll(async () => {
  s = await startServer({ args: ["--agent-command", JSON.stringify(["sh", "-c", "echo agent: \"$0\"", "{prompt}"])] });
  s.client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    const { taskId, status } = n.params;
    statuses.set(taskId, [...(statuses.get(taskId) ?? []), status]);
    if (status !== "working") waiters.get(taskId)?.(status);
  });
});
afterAll(async () => {
  await s.close();
});

/** A tools/call with `task`: the CreateTaskResult. */
async function createTask(name: string, args: Record<string, unknown>) {
  const created = await s.client.request({ method: "tools/call", params: { name, arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
  return created.task;
}

/** Resolves with the status of the task's terminal notification. */
function finalStatus(taskId: string): Promise<string> {
  const already = statuses.get(taskId)?.find((st) => st !== "working");
  if (already) return Promise.resolve(already);
  return new Promise((resolve) => waiters.set(taskId, resolve));
}

/** A command that prints `started`, then blocks until the test writes a line to its FIFO. */
function gatedCommand(name: string): { command: string; release: () => void } {
  const fifo = join(s.cwd, `${name}.fifo`);
  execFileSync("mkfifo", [fifo]);
  return { command: `echo started; read line < ${name}.fifo; echo "finished $line"`, release: () => writeFileSync(fifo, "go\n") };
}

describe("declaration", () => {
  test("the server declares the tasks capability; bash and task declare taskSupport optional", async () => {
    const caps = s.client.getServerCapabilities()!;
    expect(caps.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await s.client.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toEqual({ bash: "optional", task: "optional", task_output: undefined, kill_shell: undefined, task_list: undefined, write_stdin: undefined });
  });
});

describe("lifecycle", () => {
  test("create → working; the id is a registry task; tasks/result waits and equals the foreground shape; status notification", async () => {
    const gate = gatedCommand("life");
    const task = await createTask("bash", { command: gate.command, description: "gated" });
    expect(task.taskId).toMatch(/^bg-\d+$/);
    expect(task.status).toBe("working");
    expect(typeof task.createdAt).toBe("string");
    expect((await s.client.experimental.tasks.getTask(task.taskId)).status).toBe("working");
    // The same id through the ordinary tools.
    const listed = (await s.call("task_list", {})).tasks.find((t: any) => t.task_id === task.taskId);
    expect(listed).toMatchObject({ status: "running", command: gate.command, description: "gated" });
    // tasks/result is asked while the task still runs: it answers once the task ends.
    const result = s.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    const notified = finalStatus(task.taskId);
    gate.release();
    const raw: any = await result;
    expect(raw.isError).toBe(false);
    const foreground = await s.call("bash", { command: "echo started; echo finished go", description: "gated" });
    expect(Object.keys(raw.structuredContent).sort()).toEqual(Object.keys(foreground).sort());
    expect(raw.structuredContent).toMatchObject({ command: gate.command, exit_code: 0, stdout: "started\nfinished go\n", stderr: "", success: true, description: "gated" });
    expect(JSON.parse(raw.content[0].text)).toEqual(raw.structuredContent);
    expect(await notified).toBe("completed");
    expect((await s.client.experimental.tasks.getTask(task.taskId)).status).toBe("completed");
    expect((await s.call("task_output", { task_id: task.taskId })).stdout).toBe("started\nfinished go\n");
  });

  test("a failing command completes with its exit code; a timed-out one gives the foreground TIMEOUT error", async () => {
    const failing = await createTask("bash", { command: "echo oops >&2; exit 4" });
    const failed: any = await s.client.experimental.tasks.getTaskResult(failing.taskId, CallToolResultSchema);
    expect(failed.structuredContent).toMatchObject({ exit_code: 4, stderr: "oops\n", success: false });
    const slow = await createTask("bash", { command: `sleep ${uniqueSleep(10)}`, timeout_seconds: 1 });
    const timedOut: any = await s.client.experimental.tasks.getTaskResult(slow.taskId, CallToolResultSchema);
    expect(timedOut.isError).toBe(true);
    expect(timedOut.structuredContent.error_code).toBe("TIMEOUT");
  });

  test("the task tool runs as a task too", async () => {
    const task = await createTask("task", { prompt: "do it" });
    const raw: any = await s.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(raw.structuredContent).toMatchObject({ status: "completed", exit_code: 0, stdout: "agent: do it\n" });
  });
});

describe("cancel, kill_shell and list", () => {
  test("tasks/cancel kills the whole group: cancelled, process gone, task_output says killed", async () => {
    const marker = uniqueSleep(30);
    const ready = join(s.cwd, "cancel-ready.fifo");
    execFileSync("mkfifo", [ready]);
    const task = await createTask("bash", { command: `sleep ${marker} & sleep ${marker} & echo up > cancel-ready.fifo; wait` });
    expect(readFileSync(ready, "utf8")).toBe("up\n"); // blocks until both sleeps were started
    expect(processesMatching(marker).length).toBeGreaterThanOrEqual(2); // the sleeps (and bash)
    const notified = finalStatus(task.taskId);
    const cancelled = await s.client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe("cancelled");
    expect(processesMatching(marker)).toEqual([]); // gone before the answer
    expect(await notified).toBe("cancelled");
    expect((await s.client.experimental.tasks.getTask(task.taskId)).status).toBe("cancelled");
    expect((await s.call("task_output", { task_id: task.taskId })).status).toBe("killed");
  });

  test("kill_shell on an MCP task's id cancels it; cancelling a finished task is refused", async () => {
    const marker = uniqueSleep(30);
    const task = await createTask("bash", { command: `sleep ${marker}` });
    expect((await s.call("kill_shell", { task_id: task.taskId })).status).toBe("killed");
    await waitNoProcess(marker);
    await s.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect((await s.client.experimental.tasks.getTask(task.taskId)).status).toBe("cancelled");
    await expect(s.client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/terminal status/);
  });

  test("tasks/list lists registry tasks, including ones started with run_in_background", async () => {
    const created = await createTask("bash", { command: "echo listed" });
    const plain = await s.call("bash", { command: "echo plain", run_in_background: true });
    await s.client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
    const { tasks } = await s.client.experimental.tasks.listTasks();
    const ids = tasks.map((t) => t.taskId);
    expect(ids).toContain(created.taskId);
    expect(ids).toContain(plain.task_id);
    // tasks/result of a plain background task: its task_output once it ended.
    const raw: any = await s.client.experimental.tasks.getTaskResult(plain.task_id, CallToolResultSchema);
    expect(raw.structuredContent).toMatchObject({ task_id: plain.task_id, status: "completed", stdout: "plain\n" });
  });
});

describe("refusals", () => {
  test("a tool without task support: -32601", async () => {
    await expect(createTask("task_list", {})).rejects.toMatchObject({ code: -32601 });
  });

  test("unknown task ids: tasks/get and tasks/result name the task", async () => {
    await expect(s.client.experimental.tasks.getTask("bg-99999")).rejects.toThrow(/not found/i);
    await expect(s.client.experimental.tasks.getTaskResult("bg-99999", CallToolResultSchema)).rejects.toThrow(/bg-99999/);
  });

  test("a call that launches nothing (invalid, or needing confirmation) is a protocol error saying why", async () => {
    await expect(createTask("bash", { command: 7 })).rejects.toThrow(/command: expected string/);
    await expect(createTask("bash", { command: "rm -rf ./nothing" })).rejects.toThrow(/confirm/);
  });
});
