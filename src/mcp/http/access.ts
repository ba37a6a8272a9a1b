/** Who may use the HTTP endpoint: the bearer token, and the browser origins allowed to send it. */
export interface HttpAccess {
  token: string;
  /** Normalized origins (`scheme://host[:port]`, lower case) allowed in an `Origin` header. */
  allowedOrigins: ReadonlySet<string>;
}

/** `HTTPS://Example.com/` → `https://example.com`: how origins are compared. */
export function normalizeOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, "").toLowerCase();
}

/**
 * The refusal for a request that may not reach the MCP server, else undefined. A foreign
 * `Origin` is refused first (403: a web page reaching a local server through DNS
 * rebinding never gets further); then every request must carry `Authorization: Bearer TOKEN`
 * (401). Requests without an `Origin` (every non-browser client) pass the first check.
 */
export function refusal(req: Request, access: HttpAccess): Response | undefined {
  const origin = req.headers.get("origin");
  if (origin !== null && !access.allowedOrigins.has(normalizeOrigin(origin))) {
    return jsonRpcError(403, `Origin '${origin}' is not allowed; start the server with --allow-origin ${origin} to allow it.`);
  }
  if (!bearerMatches(req.headers.get("authorization"), access.token)) {
    return jsonRpcError(401, "Missing or wrong bearer token: send 'Authorization: Bearer <token>' (the server's --token-file, or the token it printed at start).", {
      "WWW-Authenticate": 'Bearer realm="agent-shell"',
    });
  }
  return undefined;
}

/** The CORS preflight answer for an allowed origin (browsers send it without credentials). */
export function preflight(req: Request, access: HttpAccess): Response {
  const origin = req.headers.get("origin");
  if (origin === null || !access.allowedOrigins.has(normalizeOrigin(origin))) return refusal(req, access) ?? new Response(null, { status: 403 });
  return new Response(null, { status: 204, headers: corsHeaders(origin) });
}

/** Headers that let an allowed origin's page read the answer and the session id. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
    "Access-Control-Allow-Headers": "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id",
    "Access-Control-Expose-Headers": "mcp-session-id, www-authenticate",
    Vary: "Origin",
  };
}

/** A JSON-RPC error response, the shape MCP clients expect from the transport. */
export function jsonRpcError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, { status, headers });
}

function bearerMatches(header: string | null, token: string): boolean {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  if (!match) return false;
  return constantTimeEqual(Buffer.from(match[1]!), Buffer.from(token));
}

/** Compares every byte whatever differs first (node:crypto stays out of the start-up bundle). */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false; // says nothing about the token's bytes
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
