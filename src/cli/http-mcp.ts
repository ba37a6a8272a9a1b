import { readFileSync } from "node:fs";
import type { ToolHost } from "../host/tool-host.ts";
import { boundHosts, isLoopback, normalizeOrigin } from "../mcp/http/access.ts";
import { serveHttp } from "../mcp/http/serve.ts";
import { UsageError } from "./usage.ts";
import type { HttpFlags } from "./http-flags.ts";

const DEFAULT_SESSION_TIMEOUT_S = 1800;

/** `[HOST:]PORT` → where to listen; the host defaults to 127.0.0.1 (never a public address by accident). */
export function parseListen(value: string): { hostname: string; port: number } {
  const m = value.match(/^(\d+)$/) ?? value.match(/^\[([^\]]+)\]:(\d+)$/) ?? value.match(/^([^:[\]]+):(\d+)$/);
  const [hostname, portText] = m?.length === 2 ? ["127.0.0.1", m[1]!] : [m?.[1] ?? "", m?.[2] ?? ""];
  const port = Number(portText);
  if (!m || !hostname || port > 65535) {
    throw new UsageError(`--http takes [HOST:]PORT (e.g. 8080, 127.0.0.1:8080, [::1]:8080), got '${value}'`);
  }
  return { hostname, port };
}

/** Reads the token (first line, trimmed) or says what is wrong with the file. */
function readToken(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`--token-file ${file}: ${(e as Error).message}`);
  }
  const token = text.split("\n")[0]!.trim();
  if (!/^[\x21-\x7e]{16,}$/.test(token)) {
    throw new UsageError(`--token-file ${file}: the first line must be a token of at least 16 printable characters without spaces`);
  }
  return token;
}

/** Serves the host's tools over Streamable HTTP until a signal; prints the URL (and a generated token) on stderr. */
export async function serveHttpCommand(host: ToolHost, flags: HttpFlags): Promise<never> {
  const { hostname, port } = parseListen(flags.http!);
  const timeout = Number(flags["session-timeout"] ?? DEFAULT_SESSION_TIMEOUT_S);
  if (!Number.isFinite(timeout) || timeout <= 0) throw new UsageError(`--session-timeout must be a number of seconds > 0, got '${flags["session-timeout"]}'`);
  const fromFile = flags["token-file"] !== undefined;
  const token = fromFile ? readToken(flags["token-file"]!) : Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const allowedOrigins = new Set((flags["allow-origin"] ?? []).map(normalizeOrigin));
  return serveHttp(host, {
    hostname,
    port,
    access: { token, allowedOrigins, ...boundHosts(hostname, flags["allow-host"]) },
    sessionTimeoutMs: timeout * 1000,
    onListening(url) {
      const lines = [`agent-shell: MCP over HTTP at ${url}`];
      if (!fromFile) lines.push(`agent-shell: token (send 'Authorization: Bearer <token>'): ${token}`);
      if (!isLoopback(hostname)) lines.push(`agent-shell: warning: listening on ${hostname}, not loopback: serve it only behind TLS (a reverse proxy), never on a public network in plain HTTP`);
      process.stderr.write(`${lines.join("\n")}\n`);
    },
  });
}
