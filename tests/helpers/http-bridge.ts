import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { BINARY } from "./mcp.ts";

/**
 * A small streamable-HTTP front for `agent-shell mcp` on 127.0.0.1, for test suites that
 * only speak HTTP (the MCP conformance suite). Each HTTP session gets its own stdio server
 * process; JSON-RPC messages pass through unchanged both ways.
 */
export interface HttpBridge {
  url: string;
  close(): Promise<void>;
}

export function startHttpBridge(args: string[], cwd: string): HttpBridge {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  // Every server started, with its exit: close() waits for each to be gone (also one whose
  // session already closed, or that never became a session), since the caller then removes
  // the state dir the servers write to.
  const started: Array<{ http: WebStandardStreamableHTTPServerTransport; stdio: StdioClientTransport; exited: Promise<void> }> = [];
  const open = async () => {
    const stdio = new StdioClientTransport({ command: BINARY, args: ["mcp", ...args], cwd, stderr: "ignore" });
    const exited = new Promise<void>((resolve) => {
      stdio.onclose = resolve; // the SDK calls it when the process has closed
    });
    const http = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, http),
    });
    http.onmessage = (message) => void stdio.send(message);
    stdio.onmessage = (message) => void http.send(message as never);
    http.onclose = () => void stdio.close();
    await stdio.start();
    started.push({ http, stdio, exited });
    await http.start();
    return http;
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const id = req.headers.get("mcp-session-id");
      const known = id ? sessions.get(id) : undefined;
      if (known) return known.handleRequest(req);
      if (id) return new Response("unknown session", { status: 404 });
      return (await open()).handleRequest(req);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/mcp`,
    async close() {
      server.stop(true);
      await Promise.all(started.map(({ http, stdio, exited }) => Promise.all([http.close(), stdio.close(), exited])));
    },
  };
}
