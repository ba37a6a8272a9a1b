import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alive, BINARY, waitForExit } from "./mcp.ts";

/** A running `agent-shell mcp --http` on 127.0.0.1 (a free port), its URL and token. */
export interface HttpServer {
  url: string;
  token: string;
  pid: number;
  cwd: string;
  /** Everything the server wrote on stderr so far. */
  stderr(): string;
  /** An SDK client session (Streamable HTTP, with the bearer token). */
  connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }>;
  /** SIGTERM, wait for the exit, remove the temp dirs. */
  close(): Promise<void>;
}

/**
 * Starts the binary with `mcp --http 0` and the given flags in a fresh cwd and state dir;
 * resolves once it printed its URL (and, without --token-file, the token: `token` is then
 * that printed one; with `opts.token`, the caller's).
 */
export async function startHttpServer(args: string[] = [], opts: { token?: string } = {}): Promise<HttpServer> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "as-http-cwd-")));
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-http-state-")));
  const proc = Bun.spawn([BINARY, "mcp", "--http", "0", "--state-dir", stateDir, ...args], { cwd, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  let err = "";
  const { promise: ready, resolve: announced } = Promise.withResolvers<void>();
  const expectToken = opts.token === undefined;
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) {
      err += decoder.decode(chunk, { stream: true });
      if (/MCP over HTTP at \S+\n/.test(err) && (!expectToken || /token .*: \S+\n/.test(err))) announced();
    }
    announced(); // exited before announcing: the checks below say so
  })();
  await ready;
  const url = err.match(/MCP over HTTP at (\S+)\n/)?.[1];
  const token = opts.token ?? err.match(/token .*: (\S+)\n/)?.[1];
  if (!url || !token) {
    proc.kill("SIGKILL");
    rmSync(cwd, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
    throw new Error(`mcp --http did not announce its URL and token; stderr:\n${err}`);
  }
  const clients: Array<StreamableHTTPClientTransport> = [];
  return {
    url,
    token,
    pid: proc.pid,
    cwd,
    stderr: () => err,
    async connect() {
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
      const client = new Client({ name: "agent-shell-http-tests", version: "0" });
      await client.connect(transport);
      clients.push(transport);
      return { client, transport };
    },
    async close() {
      await Promise.all(clients.map((t) => t.close().catch(() => {})));
      if (alive(proc.pid)) proc.kill("SIGTERM");
      await proc.exited;
      await waitForExit(proc.pid, 5000);
      rmSync(cwd, { recursive: true, force: true });
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** A raw JSON-RPC POST to the endpoint, with the given extra headers. */
export function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw-http-test", version: "0" } },
};
