import { ToolHost } from "../host/tool-host.ts";
import { serveStdio } from "../mcp/server.ts";
import type { StdioTransport } from "../mcp/transports/stdio-transport.ts";
import { parseHostFlags } from "./host-flags.ts";
import { hostOptions } from "./host-options.ts";
import { UsageError } from "./usage.ts";
import { MCP_HELP } from "./host-help.ts";
// Only the flag table: the HTTP server itself loads when --http is given.
import { HTTP_FLAGS, type HttpFlags } from "./http-flags.ts";

/** `agent-shell mcp`: serve the tools on stdio until stdin closes, or over HTTP with `--http`. */
export async function mcpCommand(argv: string[], started?: StdioTransport): Promise<number> {
  const { values, positionals } = parseHostFlags("mcp", argv, HTTP_FLAGS);
  if (values.help) {
    process.stdout.write(MCP_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`mcp takes no arguments, got: ${positionals.join(" ")}`);
  const http = values as HttpFlags;
  if (http.http === undefined) {
    const only = (["token-file", "allow-origin", "allow-host", "session-timeout"] as const).find((k) => http[k] !== undefined);
    if (only) throw new UsageError(`--${only} applies to --http only`);
  } else if (values.shared) throw new UsageError("--shared and --http do not combine: --http already shares one registry between its sessions");
  if (values.shared) return (await import("./shared-mcp.ts")).sharedMcp(values);
  const host = new ToolHost(hostOptions(values));
  if (http.http !== undefined) return (await import("./http-mcp.ts")).serveHttpCommand(host, http);
  return serveStdio(host, started);
}
