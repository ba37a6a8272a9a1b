import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type McpSession, startServer } from "../helpers/mcp.ts";
import { uniqueSleep, waitNoProcess, waitSessionGone } from "../helpers/procs.ts";

let s: McpSession;
const pids: number[] = [];
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
  for (const pid of pids) expect(await waitSessionGone(pid)).toEqual([]);
});

async function background(command: string, extra: Record<string, unknown> = {}) {
  const r = await s.call("bash", { command, run_in_background: true, ...extra });
  expect(r.status).toBe("running");
  pids.push(r.pid);
  return r as { task_id: string; pid: number };
}

describe("keep_stdin_open: a writable stdin pipe", () => {
  test("cat: write abc\\n → output abc; close_stdin → completed, exit 0", async () => {
    const r = await background("cat", { keep_stdin_open: true });
    const w = await s.call("write_stdin", { task_id: r.task_id, chars: "abc\n", yield_ms: 5000 });
    expect(w).toMatchObject({ task_id: r.task_id, bytes_written: 4, status: "running", output: "abc\n" });
    const c = await s.call("write_stdin", { task_id: r.task_id, close_stdin: true, yield_ms: 5000 });
    expect(c).toMatchObject({ status: "completed", exit_code: 0, output: "" });
    const out = await s.call("task_output", { task_id: r.task_id });
    expect(out).toMatchObject({ status: "completed", exit_code: 0, stdout: "abc\n" });
  }, 30_000);

  test("named keys on a pipe: enter is a newline", async () => {
    const r = await background("head -n 2", { keep_stdin_open: true });
    await s.call("write_stdin", { task_id: r.task_id, chars: "one", keys: ["enter"], yield_ms: 2000 });
    await s.call("write_stdin", { task_id: r.task_id, chars: "two", keys: ["enter"], yield_ms: 2000 });
    const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    expect(out).toMatchObject({ status: "completed", exit_code: 0, stdout: "one\ntwo\n" });
  }, 30_000);

  test("output returned by write_stdin moves the read cursor; stderr comes separately", async () => {
    const r = await background(`while read -r l; do echo "out:$l"; echo "err:$l" >&2; done`, { keep_stdin_open: true });
    const a = await s.call("write_stdin", { task_id: r.task_id, chars: "1\n", yield_ms: 5000 });
    expect(a.output).toBe("out:1\n");
    expect(a.stderr).toBe("err:1\n");
    const b = await s.call("write_stdin", { task_id: r.task_id, chars: "2\n", yield_ms: 5000 });
    expect(b.output).toBe("out:2\n");
    const fresh = await s.call("task_output", { task_id: r.task_id, only_new: true });
    expect(fresh.stdout).toBe("");
    await s.call("write_stdin", { task_id: r.task_id, close_stdin: true, yield_ms: 5000 });
    const all = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    expect(all).toMatchObject({ status: "completed", stdout: "out:1\nout:2\n", stderr: "err:1\nerr:2\n" });
  }, 30_000);

  test("writing after close_stdin: INVALID_ARGUMENT; polling still works", async () => {
    const r = await background(`cat; sleep ${uniqueSleep()}`, { keep_stdin_open: true });
    await s.call("write_stdin", { task_id: r.task_id, close_stdin: true, yield_ms: 0 });
    const w = await s.call("write_stdin", { task_id: r.task_id, chars: "more" });
    expect(w.error_code).toBe("INVALID_ARGUMENT");
    expect(w.error).toContain("closed");
    const poll = await s.call("write_stdin", { task_id: r.task_id, yield_ms: 0 });
    expect(poll).toMatchObject({ status: "running", bytes_written: 0 });
    await s.call("kill_shell", { task_id: r.task_id });
  }, 30_000);

  test("a prompt on a pipe after a few silent seconds: waiting_for_input with the prompt line", async () => {
    const r = await background(`python3 -c "n = input('Your name: '); print('hi', n)"`, { keep_stdin_open: true });
    // Silence is what is measured: wait for it (task_output's wait times out while the task waits;
    // on a loaded machine the prompt may come late, so again until it is seen, or a few times).
    let out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 3 });
    for (let i = 0; i < 5 && !out.waiting_for_input; i++) out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 3 });
    expect(out).toMatchObject({ status: "running", stdout: "Your name: ", waiting_for_input: true, prompt: "Your name:" });
    const w = await s.call("write_stdin", { task_id: r.task_id, chars: "Ada\n", yield_ms: 5000 });
    expect(w.output).toBe("hi Ada\n");
    expect(w.waiting_for_input).toBeUndefined();
  }, 30_000);

  test("keep_stdin_open in the foreground, or with stdin: INVALID_ARGUMENT naming the field", async () => {
    const a = await s.call("bash", { command: "cat", keep_stdin_open: true });
    expect(a.error_code).toBe("INVALID_ARGUMENT");
    expect(a.error).toContain("keep_stdin_open");
    expect(a.error).toContain("run_in_background");
    const b = await s.call("bash", { command: "cat", keep_stdin_open: true, run_in_background: true, stdin: "x" });
    expect(b.error_code).toBe("INVALID_ARGUMENT");
    expect(b.error).toContain("stdin");
  });
});

describe("stdin: text fed to any command, then closed", () => {
  test("foreground", async () => {
    const r = await s.call("bash", { command: "tr a-z A-Z", stdin: "hello\nworld\n" });
    expect(r).toMatchObject({ exit_code: 0, stdout: "HELLO\nWORLD\n" });
  });

  test("background", async () => {
    const r = await background("wc -l", { stdin: "1\n2\n3\n" });
    const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    expect(out).toMatchObject({ status: "completed", exit_code: 0, stdout: "3\n" });
  });

  test("without stdin, stdin is /dev/null (a reader gets EOF at once)", async () => {
    const r = await s.call("bash", { command: "cat; echo eof" });
    expect(r.stdout).toBe("eof\n");
  });
});

describe("background_after_seconds", () => {
  test("a loop still running after 1 s becomes a background task; no output lost or repeated", async () => {
    const r = await s.call("bash", { command: "for i in 1 2 3; do echo $i; sleep 1; done", background_after_seconds: 1 });
    pids.push(r.pid);
    expect(r).toMatchObject({ status: "running", backgrounded: true, stderr: "" });
    expect(r.task_id).toMatch(/^bg-\d+$/);
    expect(r.stdout).toContain("1\n");
    const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 20 });
    expect(out).toMatchObject({ status: "completed", exit_code: 0, stdout: "1\n2\n3\n" });
    const listed = await s.call("task_list", {});
    expect(listed.tasks.map((t: any) => t.task_id)).toContain(r.task_id);
  }, 30_000);

  test("the adopted task's full log lives in its task folder, as for any background task", async () => {
    const r = await s.call("bash", { command: "seq 1 30000; sleep 1.5; echo end", background_after_seconds: 0.7 });
    pids.push(r.pid);
    expect(r).toMatchObject({ backgrounded: true, stdout_truncated: true });
    const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 20 });
    expect(out).toMatchObject({ status: "completed", exit_code: 0 });
    const expected = `${Array.from({ length: 30000 }, (_, i) => `${i + 1}\n`).join("")}end\n`;
    expect(readFileSync(out.stdout_path, "utf8")).toBe(expected);
    const owner = readdirSync(join(s.stateDir, "owners"))[0]!;
    expect(readFileSync(join(s.stateDir, "owners", owner, "tasks", r.task_id, "stdout.log"), "utf8")).toBe(expected);
  }, 30_000);

  test("a command that finishes first returns the normal foreground result", async () => {
    const r = await s.call("bash", { command: "echo quick", background_after_seconds: 5 });
    expect(r).toMatchObject({ exit_code: 0, stdout: "quick\n", success: true });
    expect(r.backgrounded).toBeUndefined();
  });

  test("the adopted task is killable and leaves nothing behind", async () => {
    const marker = uniqueSleep();
    const r = await s.call("bash", { command: `sleep ${marker} & sleep ${marker}`, background_after_seconds: 0.5 });
    expect(r.backgrounded).toBe(true);
    const k = await s.call("kill_shell", { task_id: r.task_id });
    expect(k).toMatchObject({ status: "killed", success: true });
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
  });

  test("with run_in_background: INVALID_ARGUMENT", async () => {
    const r = await s.call("bash", { command: "true", run_in_background: true, background_after_seconds: 1 });
    expect(r.error_code).toBe("INVALID_ARGUMENT");
    expect(r.error).toContain("background_after_seconds");
  });
});
