/**
 * SPEC §15, "the rest of what a model reads is lean too": the six tool definitions within a
 * token budget (o200k, the tokenizer of current OpenAI models), no null fields, one name for
 * one idea, unknown parameters named with the one meant, refusals in words.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { startServer, type McpSession } from "../helpers/mcp.ts";

let s: McpSession;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.close();
});

/** Every key of a JSON value whose value is null, as paths. */
function nullPaths(value: unknown, path = ""): string[] {
  if (value === null) return [path];
  if (typeof value !== "object") return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => nullPaths(v, `${path}.${k}`));
}

describe("what a model reads", () => {
  test("the six tool definitions (name, description, input schema) cost at most 1,800 tokens together", async () => {
    const { tools } = await s.client.listTools();
    expect(tools.length).toBe(6);
    const tokens = tools.map((t) => encode(JSON.stringify({ name: t.name, description: t.description, input_schema: t.inputSchema })).length);
    const total = tokens.reduce((a, b) => a + b, 0);
    console.log(`tools/list: ${total} tokens (${tools.map((t, i) => `${t.name} ${tokens[i]}`).join(", ")})`);
    expect(total).toBeLessThanOrEqual(1800);
  });

  test("results carry no null field and no description unless one was given; a short foreground result has no log paths", async () => {
    const fg = await s.call("bash", { command: "echo hi" });
    expect(fg).not.toHaveProperty("description");
    expect(fg).not.toHaveProperty("stdout_path");
    expect(fg).not.toHaveProperty("stderr_path");
    const blocked = await s.call("bash", { command: "rm -rf /" });
    const bg = await s.call("bash", { command: "sleep 0.1", run_in_background: true });
    const out = await s.call("task_output", { task_id: bg.task_id, wait: true });
    const list = await s.call("task_list", {});
    const timeout = await s.call("bash", { command: "sleep 5", timeout_seconds: 1 });
    for (const r of [fg, blocked, bg, out, list, timeout]) expect(nullPaths(r)).toEqual([]);
  });

  test("task_output takes timeout_seconds like bash; `timeout` still works", async () => {
    const bg = await s.call("bash", { command: "sleep 30", run_in_background: true });
    try {
      for (const args of [{ timeout_seconds: 1 }, { timeout: 1 }]) {
        const t0 = performance.now();
        const r = await s.call("task_output", { task_id: bg.task_id, wait: true, ...args });
        expect(r.status).toBe("running");
        expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
      }
    } finally {
      await s.call("kill_shell", { task_id: bg.task_id });
    }
  });

  test("an unknown parameter is named in the error, with the parameter meant", async () => {
    const r = await s.call("task_output", { task_id: "bg-1", timeout_sec: 3 });
    expect(r.error_code).toBe("INVALID_ARGUMENT");
    expect(r.context.fields).toEqual(["timeout_sec"]);
    expect(r.error).toContain("timeout_sec");
    expect(r.error).toContain("did you mean 'timeout_seconds'");
    const b = await s.call("bash", { command: "true", workdir: "/tmp" });
    expect(b.context.fields).toEqual(["workdir"]);
    expect(b.error).toContain("did you mean 'working_directory'");
  });

  test("blocked and confirmation messages say in words what the command would do, never a pattern", async () => {
    const blocked = await s.call("bash", { command: ":(){ :|:& };:" });
    expect(blocked.error).toContain("fork bomb");
    expect(blocked.error).not.toMatch(/pattern|\\s|\\\(/);
    const caution = await s.call("bash", { command: "rm -f nothing-here" });
    expect(caution.needs_confirmation).toBe(true);
    expect(caution.message).toContain("deletes files");
    expect(caution.message).not.toMatch(/pattern|\^rm/);
  });
});
