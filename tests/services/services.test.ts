import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { type McpSession, startServer } from "../helpers/mcp.ts";
import { uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

// Real processes and servers: more than bun's 5 s default.
setDefaultTimeout(60_000);

let s: McpSession;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
});

/** A free TCP port on loopback, found by binding port 0. */
function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** Waits until `count` notices match `pred` (notifications are events: poll the received list briefly). */
async function noticesFor(pred: (n: Record<string, unknown>) => boolean, count: number, ms = 5000) {
  const deadline = Date.now() + ms;
  while (s.notices.filter(pred).length < count && Date.now() < deadline) await Bun.sleep(10);
  return s.notices.filter(pred);
}

describe("readiness", () => {
  test("ready_port: returns once the port accepts connections, then HTTP works", async () => {
    const port = freePort();
    const r = await s.call("bash", { command: `exec python3 -m http.server ${port} --bind 127.0.0.1`, run_in_background: true, ready_port: port, ready_timeout_seconds: 20 });
    expect(r).toMatchObject({ status: "running", ready: true });
    expect(r.ready_after_ms).toBeNumber();
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(res.status).toBe(200);
    await res.text();
    await s.call("kill_shell", { task_id: r.task_id });
  });

  test("ready_pattern on a line printed after 1 s returns once it is printed", async () => {
    const secs = uniqueSleep();
    const t0 = performance.now();
    const r = await s.call("bash", { command: `sleep 1; echo "server listening"; sleep ${secs}`, run_in_background: true, ready_pattern: "listening" });
    const took = performance.now() - t0;
    expect(r.ready).toBe(true);
    expect(took).toBeGreaterThan(900);
    await s.call("kill_shell", { task_id: r.task_id });
    expect(await waitNoProcess(`sleep ${secs}`, 500)).toEqual([]);
  });

  test("a command that exits 1 before ready → IO_ERROR with its output and exit code, nothing left", async () => {
    const r = await s.call("bash", { command: "echo booting; echo 'port in use' >&2; exit 1", run_in_background: true, ready_pattern: "listening" });
    expect(r.error_code).toBe("IO_ERROR");
    expect(r.error).toContain("exited before becoming ready");
    expect(r.context).toMatchObject({ exit_code: 1, stdout: "booting\n", stderr: "port in use\n" });
  });

  test("never ready → TIMEOUT and nothing left running", async () => {
    const secs = uniqueSleep();
    const r = await s.call("bash", { command: `sleep ${secs}`, run_in_background: true, ready_port: freePort(), ready_timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(await waitNoProcess(`sleep ${secs}`, 500)).toEqual([]);
  });

  test("readiness parameters need run_in_background; bad regex is named", async () => {
    expect((await s.call("bash", { command: "true", ready_port: 80 })).error_code).toBe("INVALID_ARGUMENT");
    const bad = await s.call("bash", { command: "true", run_in_background: true, ready_pattern: "(" });
    expect(bad.error_code).toBe("INVALID_ARGUMENT");
    expect(bad.error).toContain("ready_pattern");
  });
});

describe("named services", () => {
  test("a running task of the same name is returned instead of a duplicate", async () => {
    const secs = uniqueSleep();
    const a = await s.call("bash", { command: `sleep ${secs}`, run_in_background: true, name: "svc-a" });
    const b = await s.call("bash", { command: `sleep ${secs}`, run_in_background: true, name: "svc-a" });
    expect(b).toMatchObject({ task_id: a.task_id, already_running: true });
    const listed = (await s.call("task_list", { status: "running" })).tasks.filter((t: { name?: string }) => t.name === "svc-a");
    expect(listed.length).toBe(1);
    await s.call("kill_shell", { task_id: a.task_id });
    const c = await s.call("bash", { command: "true", run_in_background: true, name: "svc-a" });
    expect(c.task_id).not.toBe(a.task_id);
  });
});

describe("notices", () => {
  test("exactly one task_finished per background task with the right exit code, killed ones too", async () => {
    const secs = uniqueSleep();
    const done = await s.call("bash", { command: "exit 7", run_in_background: true });
    const killed = await s.call("bash", { command: `sleep ${secs}`, run_in_background: true });
    await s.call("task_output", { task_id: done.task_id, wait: true });
    await s.call("kill_shell", { task_id: killed.task_id });
    const forDone = await noticesFor((n) => n.event === "task_finished" && n.task_id === done.task_id, 1);
    const forKilled = await noticesFor((n) => n.event === "task_finished" && n.task_id === killed.task_id, 1);
    await Bun.sleep(300); // a duplicate would arrive right behind the first
    expect(s.notices.filter((n) => n.event === "task_finished" && n.task_id === done.task_id)).toEqual(forDone);
    expect(forDone).toEqual([{ event: "task_finished", task_id: done.task_id, status: "completed", exit_code: 7, duration_ms: expect.any(Number) }]);
    expect(forKilled[0]).toMatchObject({ status: "killed", exit_code: -1 });
    expect(s.notices.filter((n) => n.event === "task_finished" && n.task_id === killed.task_id).length).toBe(1);
  });

  test("notify_pattern: matched lines batched, in order, none dropped, notices ≥ 1 s apart", async () => {
    const r = await s.call("bash", {
      command: "echo ok; echo 'ERROR 1'; echo ok; echo 'ERROR 2'; sleep 2; echo 'ERROR 3'",
      run_in_background: true,
      notify_pattern: "ERROR",
    });
    const received: Array<{ at: number; lines: string[] }> = [];
    const deadline = Date.now() + 8000;
    const seen = () => s.notices.filter((n) => n.event === "task_output_matched" && n.task_id === r.task_id);
    let count = 0;
    while (Date.now() < deadline && received.flatMap((x) => x.lines).length < 3) {
      const now = seen();
      for (const n of now.slice(count)) received.push({ at: performance.now(), lines: n.lines as string[] });
      count = now.length;
      await Bun.sleep(5);
    }
    expect(received.flatMap((x) => x.lines)).toEqual(["ERROR 1", "ERROR 2", "ERROR 3"]);
    for (let i = 1; i < received.length; i++) expect(received[i]!.at - received[i - 1]!.at).toBeGreaterThan(900);
  });

  test("progress notifications about once a second for a long foreground call with a progressToken", async () => {
    const progress: Array<{ progress: number; message?: string }> = [];
    s.client.setNotificationHandler(ProgressNotificationSchema, (n) => {
      progress.push({ progress: n.params.progress, message: n.params.message });
    });
    const result = await s.client.callTool({ name: "bash", arguments: { command: "for i in 1 2 3; do echo step $i; sleep 1; done" } }, undefined, {
      onprogress: () => {},
    });
    expect((result.structuredContent as { exit_code: number }).exit_code).toBe(0);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.length).toBeLessThanOrEqual(4);
    expect(progress.at(-1)!.message).toMatch(/^step \d$/);
    expect(progress.at(-1)!.progress).toBeGreaterThan(0);
  });
});

describe("task_output over several tasks", () => {
  test("until any over a 1 s and a 5 s task returns with the first finished, the other still running", async () => {
    const a = await s.call("bash", { command: "sleep 1; echo a", run_in_background: true });
    const b = await s.call("bash", { command: "sleep 5; echo b", run_in_background: true });
    const r = await s.call("task_output", { task_ids: [a.task_id, b.task_id], until: "any", wait: true, timeout: 10 });
    expect(r.finished).toEqual([a.task_id]);
    expect(r.results.map((x: { status: string }) => x.status)).toEqual(["completed", "running"]);
    expect(r.results[0].stdout).toBe("a\n");
    const all = await s.call("task_output", { task_ids: [a.task_id, b.task_id], until: "all", wait: true, timeout: 10 });
    expect(all.finished).toEqual([a.task_id, b.task_id]);
  });
});
