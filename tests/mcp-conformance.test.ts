/**
 * SPEC §12: the official MCP conformance suite (`@modelcontextprotocol/conformance`), its
 * server scenarios that apply to a tools-only stdio server, through a streamable-HTTP
 * bridge (the suite speaks HTTP only). The other scenarios test resources, prompts,
 * completion, sampling, elicitation or the suite's own reference tools (`test_simple_text`
 * …), which agent-shell does not have: the README lists them.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startHttpBridge, type HttpBridge } from "./helpers/http-bridge.ts";

setDefaultTimeout(60_000);

const SUITE = resolve(import.meta.dir, "../node_modules/@modelcontextprotocol/conformance/dist/index.js");
const SCENARIOS = ["server-initialize", "ping", "logging-set-level", "tools-list"];

let dir: string;
let bridge: HttpBridge;

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "as-conformance-")));
  bridge = startHttpBridge(["--state-dir", join(dir, "state")], dir);
});
afterAll(async () => {
  await bridge.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("MCP conformance suite", () => {
  for (const scenario of SCENARIOS) {
    test(`${scenario} passes`, async () => {
      const run = Bun.spawn(["bun", SUITE, "server", "--url", bridge.url, "--scenario", scenario, "--verbose"], {
        cwd: dir,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
      const checks = JSON.parse(out.slice(out.indexOf("["), out.lastIndexOf("]") + 1)) as Array<{ id: string; status: string; errorMessage?: string }>;
      const failed = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
      expect({ scenario, failed, stderr: code === 0 ? "" : err }).toEqual({ scenario, failed: [], stderr: "" });
      expect(checks.filter((c) => c.status === "SUCCESS").length).toBeGreaterThan(0);
      expect(code).toBe(0);
    });
  }
});
