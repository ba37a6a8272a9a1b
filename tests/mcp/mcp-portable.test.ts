/**
 * SPEC §12: a tools/list every harness can load (OpenAI/Azure description limits, Gemini's
 * and older Codex's schema subsets), hints for every tool, and progress that only increases.
 * Checked on the live tools/list of the compiled binary over the MCP SDK client.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LATEST_PROTOCOL_VERSION, ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { spawnRaw } from "../helpers/raw-mcp.ts";

let s: McpSession;
let tools: Array<{ name: string; title?: string; description?: string; inputSchema: Record<string, unknown>; annotations?: Record<string, unknown> }>;

beforeAll(async () => {
  s = await startServer();
  tools = (await s.client.listTools()).tools as typeof tools;
});
afterAll(async () => {
  await s?.close();
});

/** Every schema node of a tool's input schema, with its path. */
function nodes(schema: unknown, path = ""): Array<[string, Record<string, unknown>]> {
  if (schema === null || typeof schema !== "object") return [];
  const out: Array<[string, Record<string, unknown>]> = Array.isArray(schema) ? [] : [[path, schema as Record<string, unknown>]];
  for (const [k, v] of Object.entries(schema)) out.push(...nodes(v, `${path}.${k}`));
  return out;
}

describe("portable tools/list", () => {
  test("descriptions: at most 1,024 characters per tool, 300 per parameter, each tool's ending with a Returns: clause", () => {
    expect(tools.map((t) => t.name).sort()).toEqual(["bash", "kill_shell", "task", "task_list", "task_output", "write_stdin"]);
    for (const t of tools) {
      expect(t.description!.length).toBeLessThanOrEqual(1024);
      expect(t.description).toMatch(/Returns: [^]*$/);
      for (const [path, node] of nodes(t.inputSchema)) {
        if (path.endsWith(".properties") || typeof node.description !== "string") continue;
        expect({ path: `${t.name}${path}`, length: (node.description as string).length }).toEqual({ path: `${t.name}${path}`, length: Math.min(300, (node.description as string).length) });
      }
    }
  });

  test("no keyword a harness rejects: propertyNames, exclusive bounds, $ref/$defs, schema-valued additionalProperties, bounds beyond int32", () => {
    for (const t of tools) {
      for (const [path, node] of nodes(t.inputSchema)) {
        const where = `${t.name}${path}`;
        for (const banned of ["propertyNames", "exclusiveMinimum", "exclusiveMaximum", "$ref", "$defs"]) expect({ where, has: banned in node }).toEqual({ where, has: false });
        if ("additionalProperties" in node) expect({ where, additionalProperties: typeof node.additionalProperties }).toEqual({ where, additionalProperties: "boolean" });
        for (const bound of ["minimum", "maximum"]) if (typeof node[bound] === "number") expect(Math.abs(node[bound] as number)).toBeLessThanOrEqual(2 ** 31 - 1);
      }
    }
  });

  test("env is published as a plain object and still validated: a non-string value is INVALID_ARGUMENT naming env.KEY", async () => {
    for (const name of ["bash", "task"]) {
      const env = (tools.find((t) => t.name === name)!.inputSchema.properties as Record<string, Record<string, unknown>>).env!;
      expect(Object.keys(env).sort()).toEqual(["description", "type"]);
      expect(env.type).toBe("object");
    }
    const r = await s.call("bash", { command: "true", env: { GOOD: "x", BAD: 1 } });
    expect(r.error_code).toBe("INVALID_ARGUMENT");
    expect(r.error).toContain("env.BAD");
  });

  test("every tool states a title and all four hints", () => {
    const expected: Record<string, [boolean, boolean, boolean, boolean]> = {
      // readOnly, destructive, idempotent, openWorld
      bash: [false, true, false, true],
      task: [false, true, false, true],
      task_output: [true, false, false, false],
      task_list: [true, false, true, false],
      kill_shell: [false, true, true, false],
      write_stdin: [false, true, false, false],
    };
    for (const t of tools) {
      expect(typeof t.title).toBe("string");
      const a = t.annotations!;
      expect([a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint]).toEqual(expected[t.name]!);
    }
  });
});

describe("progress", () => {
  test("values strictly increase and the message is the last output line", async () => {
    const seen: Array<{ progress: number; message?: string }> = [];
    s.client.setNotificationHandler(ProgressNotificationSchema, (n) => {
      seen.push({ progress: n.params.progress, message: n.params.message });
    });
    // Silent for most of the run: a progress value that counted output would repeat.
    await s.client.callTool({ name: "bash", arguments: { command: "echo first; sleep 3.5" } }, undefined, { onprogress: () => {} });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    expect(seen.every((p) => p.message === "first")).toBe(true);
  });
});

describe("protocol versions", () => {
  test("the newest version the SDK supports is offered; 2025-06-18 and 2025-03-26 clients keep working", async () => {
    for (const version of [LATEST_PROTOCOL_VERSION, "2025-06-18", "2025-03-26"]) {
      const raw = await spawnRaw();
      try {
        const init = await raw.request("initialize", { protocolVersion: version, capabilities: {}, clientInfo: { name: "old", version: "0" } });
        expect(init.result.protocolVersion).toBe(version);
        raw.notify("notifications/initialized", {});
        const listed = await raw.request("tools/list", {});
        expect(listed.result.tools.length).toBe(6);
      } finally {
        await raw.dispose();
      }
    }
  });
});
