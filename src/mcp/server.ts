import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallScope, ToolHost } from "../host/tool-host.ts";
import { isErrorResult } from "../errors.ts";
import { VERSION } from "../version.ts";
import { sandboxInstructions } from "../sandbox/describe.ts";
import { PendingConfirmations } from "../safety/confirmations.ts";
import { StdioTransport } from "./stdio-transport.ts";

/** An MCP server over a ToolHost: tools/list, tools/call, cancellation, progress and notices. */
export function createMcpServer(host: ToolHost, scope?: CallScope): Server {
  const server = new Server(
    { name: "agent-shell", version: VERSION },
    { capabilities: { tools: {}, logging: {} }, instructions: sandboxInstructions(host.sandbox) },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: host.tools }));
  // Confirmations belong to this connection: another daemon client cannot use them, and
  // they are gone when it disconnects (a declined CLI prompt leaves nothing pending).
  const confirmations = new PendingConfirmations();
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : (value: number, message: string) =>
            void extra
              .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: value, message } })
              .catch(() => {});
    const result = await host.call(request.params.name, request.params.arguments ?? {}, { signal: extra.signal, progress, confirmations, scope });
    return {
      content: [{ type: "text", text: JSON.stringify(result) }],
      structuredContent: result,
      isError: isErrorResult(result),
    };
  });
  // Background task ends and watch matches become log notices the client can act on.
  const notify = (data: Record<string, unknown>) => void server.sendLoggingMessage({ level: "info", logger: "agent-shell", data }).catch(() => {});
  const unsubscribe = host.onTaskEnd(notify);
  const unsubscribeNotices = host.onNotice(notify);
  // One host may serve many sessions (the daemon): a closed session stops listening.
  const onclose = server.onclose;
  server.onclose = () => {
    unsubscribe();
    unsubscribeNotices();
    onclose?.();
  };
  return server;
}

/**
 * Serves MCP on stdio until stdin closes or SIGTERM/SIGINT arrives; then terminates every
 * task (foreground and background) and exits.
 */
export async function serveStdio(host: ToolHost): Promise<never> {
  const server = createMcpServer(host);
  const transport: Transport = new StdioTransport();
  let exiting = false;
  const exit = async () => {
    if (exiting) return;
    exiting = true;
    await host.close();
    process.exit(0);
  };
  process.stdin.on("end", exit);
  process.stdin.on("close", exit);
  process.on("SIGTERM", exit);
  process.on("SIGINT", exit);
  process.on("SIGHUP", exit);
  await server.connect(transport);
  return new Promise<never>(() => {});
}
