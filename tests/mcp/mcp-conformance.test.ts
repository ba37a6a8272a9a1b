/**
 * SPEC §12, §17: the official MCP conformance suite (`@modelcontextprotocol/conformance`),
 * its server scenarios that apply to a tools-only server, run directly against
 * `agent-shell mcp --http` with the bearer token (added to the suite's requests by
 * helpers/conformance-auth.ts, as a configured client would send it). The other scenarios
 * test resources, prompts, completion, sampling, elicitation or the suite's own reference
 * tools (`test_simple_text`, `test_reconnection` …), which agent-shell does not have: the
 * docs/harnesses.md lists them.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { resolve } from "node:path";
import { type HttpServer, startHttpServer } from "../helpers/http-mcp.ts";

setDefaultTimeout(60_000);

const SUITE = resolve(import.meta.dir, "../../node_modules/@modelcontextprotocol/conformance/dist/index.js");
const AUTH = resolve(import.meta.dir, "../helpers/conformance-auth.ts");
const SCENARIOS = ["server-initialize", "ping", "logging-set-level", "tools-list", "tools-call-error", "server-sse-multiple-streams"];

let server: HttpServer;

beforeAll(async () => {
  server = await startHttpServer();
});
afterAll(async () => {
  await server?.close();
});

type Check = { id: string; status: string; errorMessage?: string };

async function runScenario(scenario: string): Promise<{ checks: Check[]; code: number; stderr: string }> {
  const run = Bun.spawn(["bun", "--preload", AUTH, SUITE, "server", "--url", server.url, "--scenario", scenario, "--verbose"], {
    cwd: server.cwd,
    env: { ...process.env, AGENT_SHELL_TEST_URL: server.url, AGENT_SHELL_TEST_TOKEN: server.token },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, stderr, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  // The checks are the first JSON array printed (a summary of failures may follow it).
  const start = out.indexOf("\n[") + 1;
  return { checks: JSON.parse(out.slice(start, out.indexOf("\n]", start) + 2)), code, stderr };
}

describe("MCP conformance suite against mcp --http", () => {
  for (const scenario of SCENARIOS) {
    test(`${scenario} passes`, async () => {
      const { checks, code, stderr } = await runScenario(scenario);
      const failed = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
      expect({ scenario, failed, stderr: code === 0 ? "" : stderr }).toEqual({ scenario, failed: [], stderr: "" });
      expect(checks.filter((c) => c.status === "SUCCESS").length).toBeGreaterThan(0);
      expect(code).toBe(0);
    });
  }

  // The scenario is scoped to servers without authentication: its second check expects a
  // request with no token to be accepted (ours gets 401). Its first — a rebinding Host and
  // Origin are refused — applies, and passes (403).
  test("dns-rebinding-protection: a rebinding Host/Origin is refused", async () => {
    const { checks } = await runScenario("dns-rebinding-protection");
    const rejected = checks.find((c) => c.id === "localhost-host-rebinding-rejected");
    expect(rejected).toMatchObject({ status: "SUCCESS" });
  });
});
