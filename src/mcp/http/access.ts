/** Who may use the HTTP endpoint: the bearer token, the names it is reached by, and the browser origins allowed to send it. */
export interface HttpAccess {
  token: string;
  /** Normalized origins (`scheme://host[:port]`, lower case) allowed in an `Origin` header. */
  allowedOrigins: ReadonlySet<string>;
  /** Host names (lower case, IPv6 in brackets, no port) allowed in the `Host` header. */
  allowedHosts: ReadonlySet<string>;
  /** Bound to every address (0.0.0.0, ::): any IP literal is one of ours (a rebinding page always sends a name). */
  anyAddress: boolean;
}

/** `EXAMPLE.com.:8080` → `example.com`, `[::1]:9` → `[::1]`: how Host names are compared. */
export function normalizeHost(host: string): string {
  const h = host.trim().toLowerCase();
  const name = h.startsWith("[") ? h.slice(0, h.indexOf("]") + 1) : h.replace(/:\d*$/, "");
  return name.replace(/\.$/, "");
}

export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "::1" || /^127\./.test(hostname);
}

/** The names a server bound to `hostname` answers to, plus `--allow-host` names. */
export function boundHosts(hostname: string, allowHosts: string[] = []): { allowedHosts: Set<string>; anyAddress: boolean } {
  const bound = hostname.includes(":") ? `[${hostname}]` : hostname.toLowerCase();
  const names = [bound, ...(isLoopback(hostname) ? ["localhost", "127.0.0.1", "[::1]"] : []), ...allowHosts.map(normalizeHost)];
  return { allowedHosts: new Set(names), anyAddress: hostname === "0.0.0.0" || hostname === "::" };
}

function isIpLiteral(name: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || /^\[[0-9a-f:.]+\]$/.test(name);
}

function hostAllowed(header: string | null, access: HttpAccess): boolean {
  if (header === null) return false;
  const name = normalizeHost(header);
  return access.allowedHosts.has(name) || (access.anyAddress && isIpLiteral(name));
}

/** `HTTPS://Example.com/` → `https://example.com`: how origins are compared. */
export function normalizeOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, "").toLowerCase();
}

/**
 * The refusal for a request that may not reach the MCP server, else undefined. A `Host`
 * that is not this server's address (or an --allow-host name), then a foreign `Origin`,
 * are refused first (403: a web page reaching a local server through DNS rebinding never
 * gets further); then every request must carry `Authorization: Bearer TOKEN` (401).
 * Requests without an `Origin` (every non-browser client) pass the Origin check.
 */
export function refusal(req: Request, access: HttpAccess): Response | undefined {
  const host = req.headers.get("host");
  if (!hostAllowed(host, access)) {
    const named = host === null ? "A request without a Host header" : `Host '${host}'`;
    return jsonRpcError(403, `${named} is not allowed: this server answers to ${[...access.allowedHosts].join(", ")}${access.anyAddress ? " and its IP addresses" : ""}; start it with --allow-host NAME to allow another name.`);
  }
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
  if (origin === null || !access.allowedOrigins.has(normalizeOrigin(origin)) || !hostAllowed(req.headers.get("host"), access)) return refusal(req, access) ?? new Response(null, { status: 403 });
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
