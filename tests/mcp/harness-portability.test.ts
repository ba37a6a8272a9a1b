/**
 * SPEC §12 portability, with the harnesses' own converters over the live tools/list:
 * - OpenAI Agents SDK (`@openai/agents-core`): its MCP stdio client loads the tools and
 *   converts them to strict function tools. Every tool converts; the only ones that fall
 *   back to non-strict are those with the open `env` map (an open object cannot be
 *   strict), and each converts strictly once `env` is taken out, so nothing else blocks it.
 * - Gemini (`@google/genai`): `mcpToTool` over a real MCP client builds the function
 *   declarations of a generateContent request, sent to a stand-in Gemini endpoint on
 *   127.0.0.1 that records the request; the `parameters` path runs the SDK's JSON Schema →
 *   Gemini Schema conversion on every input schema.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { getAllMcpTools, MCPServerStdio, mcpToFunctionTool } from "@openai/agents-core";
import { GoogleGenAI, mcpToTool } from "@google/genai";
import { BINARY, startServer, type McpSession } from "../helpers/mcp.ts";

setDefaultTimeout(60_000);

let s: McpSession;
let listed: any[];

beforeAll(async () => {
  s = await startServer();
  listed = (await s.client.listTools()).tools;
});
afterAll(async () => {
  await s.close();
});

describe("OpenAI Agents SDK", () => {
  test("its stdio MCP client loads all six tools and converts them for strict function calling", async () => {
    const server = new MCPServerStdio({ command: BINARY, args: ["mcp", "--state-dir", s.stateDir], cwd: s.cwd });
    await server.connect();
    try {
      const tools: any[] = await getAllMcpTools({ mcpServers: [server], convertSchemasToStrict: true });
      expect(tools.map((t) => t.name)).toEqual(listed.map((t) => t.name));
      const withMap = new Set(listed.filter((t) => t.inputSchema.properties?.env).map((t) => t.name));
      expect([...withMap].sort()).toEqual(["bash", "task"]);
      for (const tool of tools) expect({ name: tool.name, strict: tool.strict }).toEqual({ name: tool.name, strict: !withMap.has(tool.name) });
      // Without the map, bash and task convert strictly too: nothing else in them is unportable.
      for (const name of withMap) {
        const mcpTool = listed.find((t) => t.name === name);
        const { env: _, ...properties } = mcpTool.inputSchema.properties;
        const converted: any = mcpToFunctionTool({ ...mcpTool, inputSchema: { ...mcpTool.inputSchema, properties } }, server, true);
        expect(converted.strict).toBe(true);
      }
      // And the converted tool runs through the harness's own call path.
      const bash = tools.find((t) => t.name === "bash");
      const out = await bash.invoke(undefined, JSON.stringify({ command: "echo from-openai" }));
      expect(JSON.stringify(out)).toContain("from-openai");
    } finally {
      await server.close();
    }
  });
});

describe("Gemini (@google/genai)", () => {
  /** A stand-in generateContent endpoint on loopback that records each request body. */
  function fakeGemini() {
    const bodies: any[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        bodies.push(await req.json());
        return Response.json({ candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP" }] });
      },
    });
    return { bodies, url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
  }

  test("mcpToTool declares every tool with its JSON Schemas in a real request", async () => {
    const gemini = fakeGemini();
    try {
      const ai = new GoogleGenAI({ apiKey: "test", httpOptions: { baseUrl: gemini.url } });
      await ai.models.generateContent({
        model: "gemini-2.5-flash",
        contents: "list the files",
        config: { tools: [mcpToTool(s.client)], automaticFunctionCalling: { disable: true } },
      });
      const declarations = gemini.bodies[0].tools.flatMap((t: any) => t.functionDeclarations);
      expect(declarations.map((d: any) => d.name)).toEqual(listed.map((t) => t.name));
      for (const d of declarations) {
        expect(d.parametersJsonSchema.type).toBe("object");
        expect(d.responseJsonSchema.type).toBe("object");
      }
    } finally {
      gemini.stop();
    }
  });

  test("the JSON Schema → Gemini Schema conversion accepts every input schema", async () => {
    const gemini = fakeGemini();
    try {
      const ai = new GoogleGenAI({ apiKey: "test", httpOptions: { baseUrl: gemini.url } });
      const functionDeclarations = listed.map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema }));
      await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "hi", config: { tools: [{ functionDeclarations }] } });
      const sent = gemini.bodies[0].tools[0].functionDeclarations;
      expect(sent.length).toBe(listed.length);
      for (const d of sent) {
        expect(d.parameters.type).toBe("OBJECT");
        const text = JSON.stringify(d.parameters);
        for (const banned of ["propertyNames", "exclusiveMinimum", "exclusiveMaximum", "$ref", "$defs", "additionalProperties"]) expect(text).not.toContain(banned);
        expect(text).not.toContain("TYPE_UNSPECIFIED"); // every type was understood
      }
      expect(sent.find((d: any) => d.name === "bash").parameters.properties.env.type).toBe("OBJECT");
    } finally {
      gemini.stop();
    }
  });
});
