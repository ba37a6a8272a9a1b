import { ToolHost } from "../host/tool-host.ts";
import { serveStdio } from "../mcp/server.ts";
import { hostOptions, parseHostFlags } from "./host-options.ts";
import { UsageError } from "./usage.ts";
import { MCP_HELP } from "./host-help.ts";

/** `agent-shell mcp`: serve the tools on stdio until stdin closes. */
export async function mcpCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseHostFlags("mcp", argv);
  if (values.help) {
    process.stdout.write(MCP_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`mcp takes no arguments, got: ${positionals.join(" ")}`);
  if (values.shared) return (await import("./shared-mcp.ts")).sharedMcp(values);
  const host = new ToolHost(hostOptions(values));
  return serveStdio(host);
}
