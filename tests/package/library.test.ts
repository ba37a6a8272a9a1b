import { afterAll, beforeAll, expect, test, setDefaultTimeout } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// The package's own name: what a harness writes after `bun add agent-shell`.
import { type AgentShellHost, createToolHost } from "agent-shell";
import { waitNoProcess, uniqueSleep } from "../helpers/procs.ts";

// Real processes and servers: more than bun's 5 s default.
setDefaultTimeout(60_000);

let dir: string;
let host: AgentShellHost;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "as-lib-")));
  mkdirSync(join(dir, "sub"));
  host = createToolHost({ cwd: dir, state_dir: join(dir, ".state"), timeout_seconds: 30 });
});
afterAll(async () => {
  await host.close();
  rmSync(dir, { recursive: true, force: true });
});

test("tools lists names, descriptions ending in Returns:, and JSON Schemas", () => {
  expect(host.tools.map((t) => t.name)).toEqual(["bash", "task", "task_output", "kill_shell", "task_list", "write_stdin"]);
  for (const t of host.tools) {
    expect(t.description).toMatch(/Returns: \{/);
    expect(t.inputSchema.type).toBe("object");
  }
});

test("parity cases through the library: success, failure, stderr, cwd, working_directory, outside path, timeout", async () => {
  expect(await host.call("bash", { command: "echo 'hello world'" })).toMatchObject({ stdout: "hello world\n", success: true, exit_code: 0 });
  expect(await host.call("bash", { command: "exit 1" })).toMatchObject({ exit_code: 1, success: false });
  expect(await host.call("bash", { command: "echo 'error message' >&2" })).toMatchObject({ stderr: "error message\n", success: true });
  expect(await host.call("bash", { command: "pwd" })).toMatchObject({ stdout: `${dir}\n` });
  expect(await host.call("bash", { command: "pwd", working_directory: "sub" })).toMatchObject({ stdout: `${dir}/sub\n` });
  const outside = await host.call("bash", { command: "pwd", working_directory: "/usr" });
  expect(outside).toMatchObject({ error_code: "ACCESS_DENIED" });
  expect(String(outside.error)).toContain("outside allowed paths");
  const timedOut = await host.call("bash", { command: "echo partial; sleep 2", timeout_seconds: 1 });
  expect(timedOut).toMatchObject({ error_code: "TIMEOUT", error: "Command timed out after 1 seconds" });
  expect((timedOut.context as Record<string, unknown>).stdout).toBe("partial\n");
});

test("background lifecycle through the library, and close() kills what runs", async () => {
  const bg = await host.call("bash", { command: "echo hi; exit 42", run_in_background: true });
  const out = await host.call("task_output", { task_id: bg.task_id, wait: true, timeout: 10 });
  expect(out).toMatchObject({ status: "completed", exit_code: 42, stdout: "hi\n" });
  expect(await host.call("task_output", { task_id: "bg-999" })).toMatchObject({ error_code: "NOT_FOUND" });
  const secs = uniqueSleep();
  const other = createToolHost({ cwd: dir, state_dir: join(dir, ".state2") });
  await other.call("bash", { command: `sleep ${secs}`, run_in_background: true });
  await other.close();
  expect(await waitNoProcess(`sleep ${secs}`, 500)).toEqual([]);
});

test("bad arguments come back as INVALID_ARGUMENT results, not exceptions", async () => {
  expect(await host.call("bash", {})).toMatchObject({
    error_code: "INVALID_ARGUMENT",
    error: "Invalid arguments for bash: command: expected string, received undefined",
  });
  expect(await host.call("nope", {})).toMatchObject({ error_code: "INVALID_ARGUMENT" });
});

test("a foreground result that left output out names its log files (the library, like the CLI, reads them)", async () => {
  const r = await host.call("bash", { command: "seq 1 20000" });
  expect(r.stdout_truncated).toBe(true);
  expect(r.output_task_id).toMatch(/^bg-\d+$/);
  expect(Bun.file(r.stdout_path as string).size).toBe(r.stdout_total_bytes as number);
  expect(r.stderr_path).toMatch(/stderr\.log$/);
});
