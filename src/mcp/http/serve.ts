import type { ToolHost } from "../../host/tool-host.ts";
import { corsHeaders, type HttpAccess, isLoopback, jsonRpcError, normalizeOrigin, preflight, refusal } from "./access.ts";
import { HttpSession } from "./session.ts";

export interface HttpServeOptions {
  hostname: string;
  /** 0 picks a free port (the URL given to onListening has the real one). */
  port: number;
  access: HttpAccess;
  /** A session with no request and no open stream for this long is closed (its foreground work ends). */
  sessionTimeoutMs: number;
  onListening(url: string): void;
}

/** The MCP endpoint's path (the Streamable HTTP convention). */
export const MCP_PATH = "/mcp";

/**
 * `agent-shell mcp --http`: the Streamable HTTP transport (SPEC §17). Every request passes
 * the Origin and bearer-token checks first; each session is an MCP server of its own over
 * the one ToolHost, so a task started in one session is seen and awaited in another.
 * Runs until SIGTERM/SIGINT/SIGHUP, then ends every session and every task, and exits.
 */
export async function serveHttp(host: ToolHost, opts: HttpServeOptions): Promise<never> {
  // The allowed origins, plus this server's own loopback origins once its port is known.
  const allowedOrigins = new Set(opts.access.allowedOrigins);
  const access: HttpAccess = { ...opts.access, allowedOrigins };
  const sessions = new Map<string, HttpSession>();
  const unnamed = new Set<HttpSession>(); // opened for an initialize that has not named a session yet
  const onInitialized = (id: string, session: HttpSession) => {
    unnamed.delete(session);
    sessions.set(id, session);
  };
  const onClosed = (session: HttpSession) => {
    unnamed.delete(session);
    if (session.id !== undefined && sessions.get(session.id) === session) sessions.delete(session.id);
  };

  const route = async (req: Request): Promise<Response> => {
    if (new URL(req.url).pathname !== MCP_PATH) return jsonRpcError(404, `Not found: the MCP endpoint is ${MCP_PATH}.`);
    if (req.method === "OPTIONS") return preflight(req, access);
    const refused = refusal(req, access);
    if (refused) return refused;
    const id = req.headers.get("mcp-session-id");
    if (id !== null) {
      const session = sessions.get(id);
      // 404 tells the client to start a new session (the MCP transport's rule).
      return session ? session.handle(req) : jsonRpcError(404, "Session not found: it was closed or expired; initialize a new one.");
    }
    if (req.method !== "POST") return jsonRpcError(400, "Bad Request: Mcp-Session-Id header is required (initialize first with a POST).");
    const session = await HttpSession.open(host, onInitialized, onClosed);
    unnamed.add(session);
    const res = await session.handle(req);
    // Not an initialize (the transport refused it): nothing will ever use this server.
    if (session.id === undefined) void session.close();
    return res;
  };

  const server = Bun.serve({
    hostname: opts.hostname,
    port: opts.port,
    idleTimeout: 0, // SSE streams stay quiet for long stretches; sessions expire on their own clock
    async fetch(req) {
      const res = await route(req);
      const origin = req.headers.get("origin");
      if (origin !== null && access.allowedOrigins.has(normalizeOrigin(origin))) {
        for (const [k, v] of Object.entries(corsHeaders(origin))) res.headers.set(k, v);
      }
      return res;
    },
  });

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const session of [...sessions.values(), ...unnamed]) {
        if (session.idleMs(now) >= opts.sessionTimeoutMs) void session.close();
      }
    },
    Math.max(100, Math.min(opts.sessionTimeoutMs / 4, 30_000)),
  );

  let exiting = false;
  const exit = async () => {
    if (exiting) return;
    exiting = true;
    clearInterval(sweep);
    await Promise.all([...sessions.values(), ...unnamed].map((s) => s.close()));
    await host.close();
    server.stop(true);
    process.exit(0);
  };
  process.on("SIGTERM", exit);
  process.on("SIGINT", exit);
  process.on("SIGHUP", exit);

  // A page can only have one of these origins if this server served it, and it serves no
  // pages: they are no DNS-rebinding vector (the conformance suite's "valid localhost" case).
  if (isLoopback(opts.hostname)) {
    for (const name of ["127.0.0.1", "localhost", "[::1]"]) allowedOrigins.add(`http://${name}:${server.port}`);
  }
  const hostPart = server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname;
  opts.onListening(`http://${hostPart}:${server.port}${MCP_PATH}`);
  return new Promise<never>(() => {});
}
