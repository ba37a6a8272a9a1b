/**
 * `agent-shell mcp` answers initialize before its MCP SDK has loaded (SPEC §18: a start costs
 * little beyond the binary's own): the answer must be exactly the SDK server's, sent once,
 * and a message it cannot answer is left to the SDK.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { BINARY } from "../helpers/mcp.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "as-early-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Starts the server on a state dir, writes `lines`, and reads every line it answers until stdin closes. */
async function session(stateDir: string, lines: unknown[]): Promise<{ answers: any[]; stderr: string }> {
  const p = Bun.spawn([BINARY, "mcp", "--state-dir", stateDir], { cwd: base, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  for (const line of lines) p.stdin.write(`${JSON.stringify(line)}\n`);
  p.stdin.flush();
  // tools/list is the last request: once it is answered, every earlier one has been.
  const reader = p.stdout.getReader();
  let text = "";
  while (!text.includes('"tools":[')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  p.stdin.end();
  await p.exited;
  const stderr = await new Response(p.stderr).text();
  return { answers: text.trim().split("\n").map((l) => JSON.parse(l)), stderr };
}

const initialize = (protocolVersion: string, extra: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "early-test", version: "0" }, ...extra },
});
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
const toolsList = { jsonrpc: "2.0", id: 2, method: "tools/list" };

describe("initialize answered before the SDK has loaded", () => {
  for (const [name, version, expected] of [
    ["a supported version", "2025-06-18", "2025-06-18"],
    ["an older supported version", "2024-11-05", "2024-11-05"],
    ["a version the SDK does not know (it offers its latest)", "1999-01-01", LATEST_PROTOCOL_VERSION],
  ] as const) {
    test(`${name}: one answer, the SDK server's own (it compares them), then the SDK serves`, async () => {
      const stateDir = join(base, `state-${version}`);
      for (const round of ["no level remembered yet", "the level remembered"]) {
        const { answers, stderr } = await session(stateDir, [initialize(version), initialized, toolsList]);
        expect({ round, differed: stderr.includes("differed") }).toEqual({ round, differed: false });
        const first = answers.filter((a) => a.id === 1);
        expect(first.length).toBe(1);
        expect(first[0].result.protocolVersion).toBe(expected);
        expect(first[0].result.serverInfo.name).toBe("agent-shell");
        expect(first[0].result.instructions).toContain("sandbox");
        expect(answers.find((a) => a.id === 2).result.tools.length).toBe(6);
      }
      // What the first start found is kept for the next: only a level that was found.
      const memory = JSON.parse(readFileSync(join(stateDir, "sandbox-level.json"), "utf8"));
      expect(["namespaces", "landlock"]).toContain(memory.choice.level);
    });
  }

  test("an initialize it cannot read is left to the SDK, which answers it once", async () => {
    const stateDir = join(base, "state-bad");
    const bad = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } };
    const { answers } = await session(stateDir, [bad, { ...initialize("2025-06-18"), id: 3 }, initialized, toolsList]);
    const first = answers.filter((a) => a.id === 1);
    expect(first.length).toBe(1);
    expect(first[0].error).toBeDefined();
    expect(answers.filter((a) => a.id === 3).length).toBe(1);
  });

  test("a sandbox level is remembered only in the state dir of the server, and not where the sandbox is off", async () => {
    const stateDir = join(base, "state-off");
    const p = Bun.spawn([BINARY, "mcp", "--state-dir", stateDir, "--sandbox", "off"], { cwd: base, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    p.stdin.write(`${JSON.stringify(initialize("2025-06-18"))}\n`);
    p.stdin.flush();
    const { value } = await p.stdout.getReader().read();
    expect(JSON.parse(new TextDecoder().decode(value).split("\n")[0]!).result.instructions).toContain("off");
    p.stdin.end();
    await p.exited;
    expect(existsSync(join(stateDir, "sandbox-level.json"))).toBe(false);
  });
});
