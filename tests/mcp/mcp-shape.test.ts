/**
 * SPEC §2 over MCP: `content` text JSON equals `structuredContent`, `isError` exactly when the
 * result has `error`, the error shape, tool descriptions ending with a `Returns:` clause, and
 * JSON Schemas in tools/list generated from the parameters of §3.1, §3.3, §3.4 and §4.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { uniqueSleep } from "../helpers/procs.ts";
import { spawnRaw, toolResult } from "../helpers/raw-mcp.ts";

// Real processes on a shared 2-core machine: bun's 5 s default is too tight under load.
setDefaultTimeout(30_000);

let s: McpSession;
let tools: Map<string, any>;

beforeAll(async () => {
  s = await startServer();
  const listed = await s.client.listTools();
  tools = new Map(listed.tools.map((t: any) => [t.name, t]));
});
afterAll(async () => {
  await s.close();
});

const CODES = ["NOT_FOUND", "ACCESS_DENIED", "INVALID_ARGUMENT", "IO_ERROR", "TIMEOUT", "BLOCKED"];

/** Asserts the SPEC §2 envelope and returns the result. */
function checkEnvelope(raw: any): any {
  expect(raw.content.length).toBe(1);
  expect(raw.content[0].type).toBe("text");
  const parsed = JSON.parse(raw.content[0].text);
  expect(parsed).toEqual(raw.structuredContent);
  expect(raw.isError).toBe("error" in parsed);
  if ("error" in parsed) {
    expect(typeof parsed.error).toBe("string");
    expect(parsed.error.length).toBeGreaterThan(0);
    expect(CODES).toContain(parsed.error_code);
    expect(typeof parsed.context).toBe("object");
    expect(parsed.context).not.toBeNull();
  }
  return parsed;
}

describe("result envelope", () => {
  test("a successful foreground result: text JSON equals structuredContent, isError false", async () => {
    const r = checkEnvelope(await s.callRaw("bash", { command: "echo hi" }));
    expect(r.stdout).toBe("hi\n");
  });

  test("a failing command (exit 1) is a result, not an error: isError false", async () => {
    const r = checkEnvelope(await s.callRaw("bash", { command: "exit 1" }));
    expect(r.success).toBe(false);
  });

  test("TIMEOUT is an error: isError true and the error shape", async () => {
    const marker = uniqueSleep(5);
    const r = checkEnvelope(await s.callRaw("bash", { command: `sleep ${marker}`, timeout_seconds: 1 }));
    expect(r.error_code).toBe("TIMEOUT");
  });

  test("NOT_FOUND, BLOCKED, ACCESS_DENIED and INVALID_ARGUMENT all use the error shape with isError true", async () => {
    expect(checkEnvelope(await s.callRaw("task_output", { task_id: "bg-4242" })).error_code).toBe("NOT_FOUND");
    expect(checkEnvelope(await s.callRaw("bash", { command: "rm -rf /" })).error_code).toBe("BLOCKED");
    expect(checkEnvelope(await s.callRaw("bash", { command: "pwd", working_directory: "/" })).error_code).toBe("ACCESS_DENIED");
    expect(checkEnvelope(await s.callRaw("bash", {})).error_code).toBe("INVALID_ARGUMENT");
  });

  test("needs_confirmation is not an error: isError false", async () => {
    const r = checkEnvelope(await s.callRaw("bash", { command: "rm shape.txt" }));
    expect(r.needs_confirmation).toBe(true);
  });

  test("background start, task_output, kill_shell and task_list results use the same envelope", async () => {
    const marker = uniqueSleep(60);
    const started = checkEnvelope(await s.callRaw("bash", { command: `sleep ${marker}`, run_in_background: true }));
    checkEnvelope(await s.callRaw("task_output", { task_id: started.task_id }));
    checkEnvelope(await s.callRaw("task_list", {}));
    checkEnvelope(await s.callRaw("kill_shell", { task_id: started.task_id }));
  });

  test("text with quotes, backslashes, newlines and unicode round-trips through the JSON text", async () => {
    const r = checkEnvelope(await s.callRaw("bash", { command: `printf '"q" \\\\ \\t é 🦀\\n'` }));
    expect(r.stdout).toBe(`"q" \\ \t é 🦀\n`);
  });
});

describe("result size (stock MCP clients reject messages over 10 MiB)", () => {
  /** 1.5 MB on stdout and on stderr. */
  const big = "head -c 1500000 /dev/zero | tr '\\0' a; head -c 1500000 /dev/zero | tr '\\0' b >&2";

  test("task_output of one task at max_bytes 1,000,000 stays under about 2.5 MB", async () => {
    const raw = await spawnRaw();
    try {
      const { task_id } = toolResult(await raw.request("tools/call", { name: "bash", arguments: { command: big, run_in_background: true } }));
      const resp = await raw.request("tools/call", { name: "task_output", arguments: { task_id, wait: true, timeout: 20, max_bytes: 1_000_000 } });
      const result = toolResult(resp);
      expect(result.status).toBe("completed");
      expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(2_600_000);
    } finally {
      await raw.dispose();
    }
  });

  test("task_output over several tasks at max_bytes 1,000,000 still stays under about 2.5 MB", async () => {
    const raw = await spawnRaw();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(toolResult(await raw.request("tools/call", { name: "bash", arguments: { command: big, run_in_background: true } })).task_id);
      }
      const resp = await raw.request("tools/call", {
        name: "task_output",
        arguments: { task_ids: ids, wait: true, timeout: 20, max_bytes: 1_000_000 },
      });
      const result = toolResult(resp);
      expect(typeof result).toBe("object");
      expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(2_600_000);
    } finally {
      await raw.dispose();
    }
  }, 60_000);
});

describe("tools/list", () => {
  test("lists bash, task_output, kill_shell and task_list", () => {
    for (const name of ["bash", "task_output", "kill_shell", "task_list"]) expect(tools.has(name)).toBe(true);
  });

  test("every tool description ends with a Returns: clause", () => {
    for (const [name, t] of tools) {
      const desc: string = t.description;
      const at = desc.lastIndexOf("Returns:");
      expect({ name, has: at >= 0 }).toEqual({ name, has: true });
      // The clause documents the result's fields: it opens a `{...}` object.
      expect(desc.slice(at)).toMatch(/^Returns: .*\{.*\}/s);
    }
  });

  test("bash's Returns: clause documents the foreground and background fields, ? marking optional ones", () => {
    const clause: string = tools.get("bash").description.split("Returns:")[1];
    for (const f of ["command", "exit_code", "stdout", "stderr", "success", "duration_ms", "description?", "task_id", "status", "pid", "needs_confirmation"]) {
      expect(clause).toContain(f);
    }
  });

  test("task_output's Returns: clause documents its fields", () => {
    const clause: string = tools.get("task_output").description.split("Returns:")[1];
    for (const f of ["task_id", "task_type", "status", "stdout", "stderr?", "exit_code?", "stdout_total_bytes", "stderr_total_bytes"]) {
      expect(clause).toContain(f);
    }
  });

  test("kill_shell's and task_list's Returns: clauses document their fields", () => {
    const kill: string = tools.get("kill_shell").description.split("Returns:")[1];
    for (const f of ["task_id", "task_type", "status", "success"]) expect(kill).toContain(f);
    const list: string = tools.get("task_list").description.split("Returns:")[1];
    for (const f of ["tasks", "task_id", "task_type", "kind", "status", "command?", "description?", "pid", "tty", "started_at", "ended_at?", "exit_code?"]) {
      expect(list).toContain(f);
    }
  });

  test("bash's input schema: command required string; the SPEC's parameters with their types and bounds", () => {
    const schema = tools.get("bash").inputSchema;
    expect(schema.type).toBe("object");
    // §13: `bash {service: NAME}` starts a declared service, so `command` is required only without `service` (checked at call time).
    expect(schema.required ?? []).toEqual([]);
    expect(schema.properties.command.description).toContain("Required unless `service` is given");
    const p = schema.properties;
    expect(p.command.type).toBe("string");
    // minLength is checked at call time (zod); the published schema leaves it out to save tokens (SPEC §15).
    expect(p.description.type).toBe("string");
    expect(p.timeout_seconds.type).toBe("integer");
    expect(p.timeout_seconds.minimum).toBe(1);
    expect(p.timeout_seconds.description).toContain("120");
    expect(p.confirmed.type).toBe("boolean");
    expect(p.working_directory.type).toBe("string");
    expect(p.run_in_background.type).toBe("boolean");
  });

  test("task_output's input schema: task_id, wait, timeout_seconds ≥ 0, only_new, tail_lines, filter, max_bytes ≤ 1,000,000", () => {
    const p = tools.get("task_output").inputSchema.properties;
    expect(p.task_id.type).toBe("string");
    expect(p.wait.type).toBe("boolean");
    expect(p.timeout_seconds.type).toBe("integer");
    expect(p.timeout_seconds.minimum).toBe(0);
    expect(p.only_new.type).toBe("boolean");
    expect(p.tail_lines.type).toBe("integer");
    expect(p.filter.type).toBe("string");
    expect(p.max_bytes.type).toBe("integer");
    expect(p.max_bytes.maximum).toBe(1_000_000);
  });

  test("kill_shell's input schema requires task_id; task_list's status is the enum running|finished|all", () => {
    const kill = tools.get("kill_shell").inputSchema;
    expect(kill.required).toEqual(["task_id"]);
    expect(kill.properties.task_id.type).toBe("string");
    const list = tools.get("task_list").inputSchema;
    expect(list.required ?? []).toEqual([]);
    expect([...list.properties.status.enum].sort()).toEqual(["all", "finished", "running"]);
  });

  test("every parameter has a description, and optional parameters with a SPEC default state it as '(default: …)'", () => {
    const defaults: Record<string, string[]> = {
      bash: ["timeout_seconds", "confirmed", "working_directory", "run_in_background"],
      task_output: ["wait", "timeout_seconds", "max_bytes", "only_new"],
      task_list: ["status"],
    };
    for (const [name, t] of tools) {
      for (const [param, prop] of Object.entries<any>(t.inputSchema.properties ?? {})) {
        expect({ tool: name, param, described: typeof prop.description === "string" && prop.description.length > 0 }).toEqual({
          tool: name,
          param,
          described: true,
        });
      }
      for (const param of defaults[name] ?? []) {
        expect({ tool: name, param, d: t.inputSchema.properties[param].description }).toMatchObject({
          tool: name,
          param,
          d: expect.stringContaining("(default:"),
        });
      }
    }
  });

  test("the server identifies itself as agent-shell with the tools capability", () => {
    expect(s.client.getServerVersion()?.name).toBe("agent-shell");
    expect(s.client.getServerCapabilities()?.tools).toBeDefined();
  });
});
