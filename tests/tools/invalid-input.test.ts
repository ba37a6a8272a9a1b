/**
 * SPEC §2 bad input: INVALID_ARGUMENT with a message naming the field, returned (never thrown)
 * for every tool; unknown tools; and a malformed JSON line on the server's stdin.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { spawnRaw, toolResult } from "../helpers/raw-mcp.ts";

// Real processes on a shared 2-core machine: bun's 5 s default is too tight under load.
setDefaultTimeout(30_000);

let s: McpSession;
let taskId: string;

beforeAll(async () => {
  s = await startServer();
  taskId = (await s.call("bash", { command: "true", run_in_background: true })).task_id;
});
afterAll(async () => {
  await s.close();
});

/** Calls and asserts an INVALID_ARGUMENT error naming `field`; returns the result. */
async function invalid(tool: string, args: Record<string, unknown>, field: string): Promise<any> {
  const raw = await s.callRaw(tool, args);
  const r = raw.structuredContent;
  expect(raw.isError).toBe(true);
  expect(r.error_code).toBe("INVALID_ARGUMENT");
  expect(r.error).toContain(field);
  expect(typeof r.context).toBe("object");
  return r;
}

describe("bash arguments", () => {
  test("missing command → 'Invalid arguments for bash: command: expected string, received undefined'", async () => {
    const r = await invalid("bash", {}, "command");
    expect(r.error).toBe("Invalid arguments for bash: command: expected string, received undefined");
  });

  test("empty command → INVALID_ARGUMENT naming command", async () => {
    await invalid("bash", { command: "" }, "command");
  });

  test("command of the wrong type → INVALID_ARGUMENT naming command and the received type", async () => {
    const r = await invalid("bash", { command: 5 }, "command");
    expect(r.error).toContain("number");
  });

  test("timeout_seconds: -1 → INVALID_ARGUMENT naming timeout_seconds", async () => {
    await invalid("bash", { command: "true", timeout_seconds: -1 }, "timeout_seconds");
  });

  test("timeout_seconds: 0 → INVALID_ARGUMENT (must be ≥ 1)", async () => {
    await invalid("bash", { command: "true", timeout_seconds: 0 }, "timeout_seconds");
  });

  test("timeout_seconds: 1.5 → INVALID_ARGUMENT (must be an integer)", async () => {
    await invalid("bash", { command: "true", timeout_seconds: 1.5 }, "timeout_seconds");
  });

  test("timeout_seconds as a string → INVALID_ARGUMENT naming timeout_seconds", async () => {
    await invalid("bash", { command: "true", timeout_seconds: "10" }, "timeout_seconds");
  });

  test("run_in_background as a string → INVALID_ARGUMENT naming run_in_background", async () => {
    await invalid("bash", { command: "true", run_in_background: "yes" }, "run_in_background");
  });

  test("confirmed as a number → INVALID_ARGUMENT naming confirmed", async () => {
    await invalid("bash", { command: "true", confirmed: 1 }, "confirmed");
  });

  test("working_directory as a number → INVALID_ARGUMENT naming working_directory", async () => {
    await invalid("bash", { command: "true", working_directory: 7 }, "working_directory");
  });

  test("env with a non-string value → INVALID_ARGUMENT naming env", async () => {
    await invalid("bash", { command: "true", env: { A: 1 } }, "env");
  });

  test("an invalid call runs nothing", async () => {
    const r = await s.call("bash", { command: "touch should-not-exist", timeout_seconds: -1 });
    expect(r.error_code).toBe("INVALID_ARGUMENT");
    expect(await Bun.file(`${s.cwd}/should-not-exist`).exists()).toBe(false);
  });
});

describe("task tool arguments", () => {
  test("task_output task_id: 5 → INVALID_ARGUMENT naming task_id", async () => {
    const r = await invalid("task_output", { task_id: 5 }, "task_id");
    expect(r.error).toContain("number");
  });

  test("kill_shell task_id: 5 → INVALID_ARGUMENT naming task_id", async () => {
    await invalid("kill_shell", { task_id: 5 }, "task_id");
  });

  test("kill_shell without task_id → INVALID_ARGUMENT naming task_id", async () => {
    await invalid("kill_shell", {}, "task_id");
  });

  test("task_output without task_id → INVALID_ARGUMENT naming task_id", async () => {
    await invalid("task_output", {}, "task_id");
  });

  test("task_output timeout: -1 → INVALID_ARGUMENT naming timeout", async () => {
    await invalid("task_output", { task_id: taskId, wait: true, timeout: -1 }, "timeout");
  });

  test("task_output wait as a string → INVALID_ARGUMENT naming wait", async () => {
    await invalid("task_output", { task_id: taskId, wait: "yes" }, "wait");
  });

  test("task_output tail_lines: -1 → INVALID_ARGUMENT naming tail_lines", async () => {
    await invalid("task_output", { task_id: taskId, tail_lines: -1 }, "tail_lines");
  });

  test("task_output only_new as a string → INVALID_ARGUMENT naming only_new", async () => {
    await invalid("task_output", { task_id: taskId, only_new: "true" }, "only_new");
  });

  test("task_output invalid filter regex → INVALID_ARGUMENT naming filter", async () => {
    await invalid("task_output", { task_id: taskId, filter: "[a-" }, "filter");
  });

  test("task_output max_bytes: 2,000,000 → INVALID_ARGUMENT naming max_bytes", async () => {
    await invalid("task_output", { task_id: taskId, max_bytes: 2_000_000 }, "max_bytes");
  });

  test("task_output with an unknown stream value → INVALID_ARGUMENT naming stream", async () => {
    await invalid("task_output", { task_id: taskId, offset: 0, stream: "both" }, "stream");
  });

  test("task_list with an unknown status value → INVALID_ARGUMENT naming status", async () => {
    await invalid("task_list", { status: "bogus" }, "status");
  });
});

describe("unknown tools and the transport", () => {
  test("an unknown tool → INVALID_ARGUMENT naming the tool, returned as a result (isError), not thrown", async () => {
    const raw = await s.callRaw("no_such_tool", {});
    expect(raw.isError).toBe(true);
    const r = raw.structuredContent ?? JSON.parse(raw.content[0].text);
    expect(r.error_code).toBe("INVALID_ARGUMENT");
    expect(r.error).toContain("no_such_tool");
  });

  test("the server keeps answering after bad input", async () => {
    await s.callRaw("bash", {});
    await s.callRaw("no_such_tool", {});
    const r = await s.call("bash", { command: "echo still here" });
    expect(r.stdout).toBe("still here\n");
  });

  test("a malformed JSON line on stdin: the server survives and answers the next valid request", async () => {
    const raw = await spawnRaw();
    try {
      raw.writeLine("{this is not json");
      raw.writeLine('{"jsonrpc": "2.0", "id": 99, "method": ');
      raw.writeLine("[1, 2, 3");
      const resp = await raw.request("tools/call", { name: "bash", arguments: { command: "echo alive" } });
      expect(toolResult(resp).stdout).toBe("alive\n");
      const list = await raw.request("tools/list", {});
      expect(list.result.tools.length).toBeGreaterThan(0);
    } finally {
      await raw.dispose();
    }
  });

  test("a tools/call without arguments → INVALID_ARGUMENT naming command", async () => {
    const raw = await spawnRaw();
    try {
      const resp = await raw.request("tools/call", { name: "bash" });
      const r = toolResult(resp);
      expect(resp.result.isError).toBe(true);
      expect(r.error_code).toBe("INVALID_ARGUMENT");
      expect(r.error).toContain("command");
    } finally {
      await raw.dispose();
    }
  });
});
