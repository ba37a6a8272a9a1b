/**
 * The network by name (SPEC §21), against the compiled binary: names this test adds to
 * /etc/hosts (removed again in afterAll, whatever happened) point at servers of its own on
 * 127.0.0.1, which count what reaches them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { appendFileSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createTcpServer } from "node:net";
import { createSocket } from "node:dgram";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type McpSession } from "./helpers/mcp.ts";

const tag = Math.random().toString(36).slice(2, 8);
const NAMES = { allowed: `allowed-${tag}.test`, wild: `api.wild-${tag}.test`, unknown: `unknown-${tag}.test`, denied: `denied-${tag}.test`, git: `git-${tag}.test` };
const HOSTS_LINES = Object.values(NAMES).map((n) => `127.0.0.1 ${n} # agent-shell network test ${tag}\n`);

let hits: Record<string, number> = {};
let http: ReturnType<typeof Bun.serve>;
let https: ReturnType<typeof Bun.serve>;
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "as-net-")));

function removeHostsLines(): void {
  const text = readFileSync("/etc/hosts", "utf8");
  writeFileSync("/etc/hosts", text.split("\n").filter((l) => !l.includes(`agent-shell network test ${tag}`)).join("\n"));
}

beforeAll(() => {
  appendFileSync("/etc/hosts", HOSTS_LINES.join(""));
  const handler = (req: Request) => {
    const host = (req.headers.get("host") ?? "").replace(/:\d+$/, "");
    hits[host] = (hits[host] ?? 0) + 1;
    return new Response(`hello from ${host}\n`);
  };
  http = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler });
  const cert = selfSigned();
  https = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler, tls: cert });
});

afterAll(() => {
  removeHostsLines();
  http?.stop(true);
  https?.stop(true);
  rmSync(scratch, { recursive: true, force: true });
});

function selfSigned(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "as-net-cert-"));
  try {
    const r = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", join(dir, "k.pem"), "-out", join(dir, "c.pem")], { stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    return { cert: readFileSync(join(dir, "c.pem"), "utf8"), key: readFileSync(join(dir, "k.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function configFile(lines: string): string {
  const path = join(scratch, `config-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(path, lines);
  return path;
}

async function withServer<T>(config: string, fn: (t: McpSession) => Promise<T>, opts: Parameters<typeof startServer>[0] = {}): Promise<T> {
  const t = await startServer({ ...opts, args: ["--config", configFile(config), ...(opts.args ?? [])] });
  try {
    return await fn(t);
  } finally {
    await t.close();
  }
}

const allowList = (...names: string[]) => `network_allow = [${names.map((n) => JSON.stringify(n)).join(", ")}]\n`;

describe("allowed names", () => {
  test("an allowed name is reached by curl over http and https (through CONNECT), and a wildcard entry covers a name under it", async () => {
    hits = {};
    await withServer(allowList(NAMES.allowed, `*.wild-${tag}.test`), async (t) => {
      const r = await t.call("bash", { command: `curl -sS --max-time 5 http://${NAMES.allowed}:${http.port}/ && curl -sSk --max-time 5 https://${NAMES.allowed}:${https.port}/ && curl -sS --max-time 5 http://${NAMES.wild}:${http.port}/` });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe(`hello from ${NAMES.allowed}\nhello from ${NAMES.allowed}\nhello from ${NAMES.wild}\n`);
      expect(r.exit_code).toBe(0);
      expect(r.network_denied).toBeUndefined();
    });
    expect(hits[NAMES.allowed]).toBe(2);
    expect(hits[NAMES.wild]).toBe(1);
  });
});

describe("names nobody allowed", () => {
  test("a client that cannot elicit: refused within 2 s, nothing reaches the server, the result names the host and network_allow", async () => {
    hits = {};
    await withServer("", async (t) => {
      const started = performance.now();
      const r = await t.call("bash", { command: `curl -sS --max-time 20 http://${NAMES.unknown}:${http.port}/` });
      expect(performance.now() - started).toBeLessThan(2000);
      expect(r.stdout).toContain(`agent-shell refused the connection to ${NAMES.unknown}:${http.port}`);
      expect(r.stdout).toContain("network_allow");
      expect(r.network_denied).toEqual([expect.objectContaining({ host: NAMES.unknown, port: http.port })]);
      expect(r.network_hint).toContain("network_allow");
    });
    expect(hits[NAMES.unknown]).toBeUndefined();
  });
});
