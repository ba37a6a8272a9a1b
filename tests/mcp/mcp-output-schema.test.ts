/**
 * SPEC §12: every tool declares an outputSchema that rejects `{}`, and every
 * structuredContent it returns validates against it: each success shape and each error code
 * the tool can give. Checked with the SDK's own Ajv validator (what MCP clients use), and
 * through the SDK client, which validates every call once it has listed the tools.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { uniqueSleep } from "../helpers/procs.ts";

setDefaultTimeout(60_000);

let s: McpSession;
let outside: string;
const validators = new Map<string, (v: unknown) => { valid: boolean; errorMessage?: string }>();
const seen = new Map<string, Set<string>>();

beforeAll(async () => {
  outside = realpathSync(mkdtempSync(join(tmpdir(), "as-outside-")));
  s = await startServer({ args: ["--agent-command", JSON.stringify(["sh", "-c", "echo agent: \"$0\"", "{prompt}"])] });
  const ajv = new AjvJsonSchemaValidator();
  for (const tool of (await s.client.listTools()).tools) {
    const check = ajv.getValidator(tool.outputSchema as any);
    validators.set(tool.name, (v) => check(v) as any);
  }
});
afterAll(async () => {
  await s.close();
  rmSync(outside, { recursive: true, force: true });
});

/** Calls a tool, validates its structuredContent against the tool's outputSchema, and returns it. */
async function checked(tool: string, args: Record<string, unknown>): Promise<any> {
  const raw: any = await s.callRaw(tool, args);
  const result = raw.structuredContent;
  const verdict = validators.get(tool)!(result);
  if (!verdict.valid) throw new Error(`${tool} result does not match its outputSchema: ${verdict.errorMessage}\n${JSON.stringify(result)}`);
  const kinds = seen.get(tool) ?? new Set();
  kinds.add(result.error_code ?? (result.needs_confirmation ? "needs_confirmation" : "ok"));
  seen.set(tool, kinds);
  return result;
}

describe("outputSchema declarations", () => {
  test("every tool has an object outputSchema that rejects {} and a non-object", async () => {
    const { tools } = await s.client.listTools();
    expect(tools.length).toBe(6);
    for (const tool of tools) {
      expect(tool.outputSchema?.type).toBe("object");
      const check = validators.get(tool.name)!;
      expect(check({}).valid).toBe(false);
      expect(check({ error: "x" }).valid).toBe(false); // half an error shape is not one
      expect(check({ error: "x", error_code: "IO_ERROR", context: {} }).valid).toBe(true);
      expect(check({ error: "x", error_code: "OOPS", context: {} }).valid).toBe(false);
    }
  });

  test("the output schemas use only the portable keywords", async () => {
    const text = JSON.stringify((await s.client.listTools()).tools.map((t) => t.outputSchema));
    for (const banned of ["propertyNames", "exclusiveMinimum", "exclusiveMaximum", "$ref", "$defs", "$schema"]) expect(text).not.toContain(`"${banned}"`);
  });
});

describe("bash results validate", () => {
  test("foreground success and failure", async () => {
    expect((await checked("bash", { command: "echo hi", description: "greet" })).stdout).toBe("hi\n");
    expect((await checked("bash", { command: "exit 3" })).exit_code).toBe(3);
    // A signal is reported as such outside bubblewrap (whose init turns it into 128+N).
    const unsandboxed = { command: "kill -TERM $$", sandbox: "off" };
    expect((await checked("bash", unsandboxed)).needs_confirmation).toBe(true);
    expect((await checked("bash", { ...unsandboxed, confirmed: true })).signal).toBe("SIGTERM");
  });

  test("a truncated foreground run with its log path", async () => {
    const r = await checked("bash", { command: "head -c 3000000 /dev/zero | tr '\\0' x" });
    expect(r.stdout_truncated).toBe(true);
  });

  test("tty foreground run with a screen", async () => {
    expect(typeof (await checked("bash", { command: "echo on-a-tty", tty: true })).screen).toBe("string");
  });

  test("background, service readiness and an already running service", async () => {
    const marker = uniqueSleep(30);
    const bg = await checked("bash", { command: `echo up; sleep ${marker}`, run_in_background: true, name: "svc", ready_pattern: "up" });
    expect(bg.ready).toBe(true);
    expect((await checked("bash", { command: `sleep ${marker}`, run_in_background: true, name: "svc" })).already_running).toBe(true);
    await checked("kill_shell", { task_id: bg.task_id });
  });

  test("moved to the background by background_after_seconds", async () => {
    const r = await checked("bash", { command: `echo early; sleep ${uniqueSleep(30)}`, background_after_seconds: 1 });
    expect(r.backgrounded).toBe(true);
    await checked("kill_shell", { task_id: r.task_id });
  });

  test("needs_confirmation, then BLOCKED for an unflagged confirmation", async () => {
    expect((await checked("bash", { command: "rm -rf ./nothing-here" })).needs_confirmation).toBe(true);
    expect((await checked("bash", { command: "rm -rf ./other", confirmed: true })).error_code).toBe("BLOCKED");
  });

  test("INVALID_ARGUMENT, ACCESS_DENIED, NOT_FOUND and TIMEOUT", async () => {
    expect((await checked("bash", { command: 5 })).error_code).toBe("INVALID_ARGUMENT");
    expect((await checked("bash", { command: "true", working_directory: outside })).error_code).toBe("ACCESS_DENIED");
    expect((await checked("bash", { command: "true", working_directory: "missing-dir" })).error_code).toBe("NOT_FOUND");
    expect((await checked("bash", { command: `sleep ${uniqueSleep(5)}`, timeout_seconds: 1 })).error_code).toBe("TIMEOUT");
  });

  test("an unknown SSH host is INVALID_ARGUMENT", async () => {
    const r = await checked("bash", { command: "true", host: "no-such-host" });
    expect(r.error_code).toBe("INVALID_ARGUMENT");
  });
});

describe("task results validate", () => {
  test("foreground, background and an invalid call", async () => {
    expect((await checked("task", { prompt: "do it" })).stdout).toBe("agent: do it\n");
    const bg = await checked("task", { prompt: "later", background: true });
    expect(bg.status).toBe("running");
    await checked("task_output", { task_id: bg.task_id, wait: true });
    expect((await checked("task", { prompt: "" })).error_code).toBe("INVALID_ARGUMENT");
  });
});

describe("task_output, kill_shell, task_list and write_stdin results validate", () => {
  test("each shape and error", async () => {
    const a = await checked("bash", { command: "echo a", run_in_background: true });
    const b = await checked("bash", { command: `sleep ${uniqueSleep(30)}`, run_in_background: true });
    expect((await checked("task_output", { task_id: a.task_id, wait: true })).status).toBe("completed");
    expect((await checked("task_output", { task_ids: [a.task_id, b.task_id], until: "any", wait: true })).finished).toEqual([a.task_id]);
    expect((await checked("task_output", { task_id: a.task_id, offset: 0, length: 1 })).stdout).toBe("a");
    expect((await checked("task_output", { task_id: "bg-999" })).error_code).toBe("NOT_FOUND");
    expect((await checked("task_output", {})).error_code).toBe("INVALID_ARGUMENT");
    expect((await checked("task_list", {})).tasks.length).toBeGreaterThanOrEqual(2);
    expect((await checked("task_list", { status: "bogus" })).error_code).toBe("INVALID_ARGUMENT");
    expect((await checked("write_stdin", { task_id: b.task_id, chars: "x" })).error_code).toBe("INVALID_ARGUMENT");
    expect((await checked("kill_shell", { task_id: b.task_id })).status).toBe("killed");
    expect((await checked("kill_shell", { task_id: a.task_id })).status).toBe("already_completed");
    expect((await checked("kill_shell", { task_id: "bg-999" })).error_code).toBe("NOT_FOUND");
    const killed = await checked("task_output", { task_id: b.task_id });
    expect(killed.status).toBe("killed");
  });

  test("write_stdin answers on a tty task", async () => {
    const t = await checked("bash", { command: "read line; echo got:$line", tty: true, run_in_background: true });
    const r = await checked("write_stdin", { task_id: t.task_id, chars: "hello", keys: ["enter"], yield_ms: 2000 });
    expect(r.output).toContain("got:hello");
    await checked("task_output", { task_id: t.task_id, wait: true });
  });

  test("every tool was seen succeeding, and failing with the error shape", () => {
    for (const tool of validators.keys()) {
      const kinds = seen.get(tool)!;
      expect(kinds.has("ok")).toBe(true);
      expect([...kinds].some((k) => k !== "ok" && k !== "needs_confirmation")).toBe(true);
    }
  });
});
