/**
 * SPEC §12: `agent-shell mcp --shared` is the per-user daemon on stdio, so sessions and
 * clients that start one server per call share one registry; each connection's --cwd and
 * --allow are enforced by the daemon for that connection only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, startServer } from "../helpers/mcp.ts";
import { uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

let base: string;
let state: string;
let dirA: string;
let dirB: string;
const shared = (cwd: string, extra: string[] = []) => startServer({ cwd, stateDir: state, args: ["--shared", "--cwd", cwd, ...extra] });

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "as-shared-")));
  state = join(base, "state");
  mkdirSync(state, { mode: 0o700 });
  dirA = join(base, "a");
  dirB = join(base, "b");
  mkdirSync(dirA);
  mkdirSync(dirB);
});
afterAll(() => {
  Bun.spawnSync([BINARY, "daemon", "stop"], { env: { ...process.env, AGENT_SHELL_STATE_DIR: state }, stdout: "ignore", stderr: "ignore" });
  rmSync(base, { recursive: true, force: true });
});

describe("mcp --shared", () => {
  test("a task started through one stdio process is awaited through another, also after the first has exited", async () => {
    const one = await shared(dirA);
    const started = await one.call("bash", { command: "sleep 0.5; echo from-one", run_in_background: true });
    expect(started.task_id).toMatch(/^bg-\d+$/);
    await one.close(); // a one-process-per-call client: its process is gone
    const two = await shared(dirA);
    try {
      const r = await two.call("task_output", { task_id: started.task_id, wait: true, timeout: 10 });
      expect(r).toMatchObject({ status: "completed", exit_code: 0, stdout: "from-one\n" });
    } finally {
      await two.close();
    }
  });

  test("each connection runs only inside its own allowed paths, whatever another allows", async () => {
    const wide = await shared(dirA, ["--allow", dirB]);
    const narrow = await shared(dirA);
    try {
      expect((await narrow.call("bash", { command: "pwd" })).stdout).toBe(`${dirA}\n`);
      expect((await wide.call("bash", { command: "pwd", working_directory: dirB })).stdout).toBe(`${dirB}\n`);
      const denied = await narrow.call("bash", { command: "pwd", working_directory: dirB });
      expect(denied.error_code).toBe("ACCESS_DENIED");
      expect(denied.error).toContain("outside allowed paths");
    } finally {
      await wide.close();
      await narrow.close();
    }
  });

  test("an MCP task created through one stdio process gives its result through another", async () => {
    const one = await shared(dirA);
    const created = await one.client.request(
      { method: "tools/call", params: { name: "bash", arguments: { command: "sleep 0.3; echo as-task" }, task: {} } },
      CreateTaskResultSchema,
    );
    await one.close();
    const two = await shared(dirA);
    try {
      const raw: any = await two.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      expect(raw.structuredContent).toMatchObject({ exit_code: 0, stdout: "as-task\n", success: true });
      expect((await two.client.experimental.tasks.getTask(created.task.taskId)).status).toBe("completed");
    } finally {
      await two.close();
    }
  });

  test("each connection's --sandbox is its default mode; another connection keeps its own", async () => {
    // Outside /tmp, which read-only keeps writable.
    const work = realpathSync(mkdtempSync("/var/tmp/as-shared-sandbox-"));
    const readOnly = await shared(work, ["--sandbox", "read-only"]);
    const workspace = await shared(work);
    try {
      const denied = await readOnly.call("bash", { command: "touch ro-file" });
      expect(denied).toMatchObject({ sandbox: "read-only", success: false });
      expect(existsSync(join(work, "ro-file"))).toBe(false);
      const written = await workspace.call("bash", { command: "touch ws-file" });
      expect(written).toMatchObject({ sandbox: "workspace-write", success: true });
      expect(existsSync(join(work, "ws-file"))).toBe(true);
    } finally {
      await readOnly.close();
      await workspace.close();
      rmSync(work, { recursive: true, force: true });
    }
  });

  test("a connection's looser --sandbox is asked for, never granted by its hello alone (SPEC §20)", async () => {
    const work = realpathSync(mkdtempSync("/var/tmp/as-shared-looser-"));
    const off = await shared(work, ["--sandbox", "off"]);
    try {
      const first = await off.call("bash", { command: "touch outside-asked" });
      expect(first).toMatchObject({ needs_confirmation: true });
      expect(existsSync(join(work, "outside-asked"))).toBe(false);
      const confirmed = await off.call("bash", { command: "touch outside-asked", confirmed: true });
      expect(confirmed).toMatchObject({ sandbox: "off", success: true });
      expect(existsSync(join(work, "outside-asked"))).toBe(true);
    } finally {
      await off.close();
      rmSync(work, { recursive: true, force: true });
    }
  });

  test("nothing is left running after daemon stop", async () => {
    const s = await shared(dirA);
    const m = uniqueSleep(430);
    try {
      await s.call("bash", { command: `sleep ${m}`, run_in_background: true });
    } finally {
      await s.close();
    }
    const stop = Bun.spawnSync([BINARY, "daemon", "stop"], { env: { ...process.env, AGENT_SHELL_STATE_DIR: state }, stdout: "pipe", stderr: "pipe" });
    expect(stop.exitCode).toBe(0);
    expect(await waitNoProcess(`sleep ${m}`, 2000)).toEqual([]);
  });
});
