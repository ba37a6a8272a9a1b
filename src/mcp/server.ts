import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  type JSONRPCMessage,
  type MessageExtraInfo,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallScope, ToolHost } from "../host/tool-host.ts";
import type { ToolResult } from "../errors.ts";
import type { ConfirmationPolicy } from "../safety/confirmation/command-guard.ts";
import { SERVER_CAPABILITIES, SERVER_INFO } from "./server-identity.ts";
import { sandboxInstructions } from "../sandbox/describe.ts";
import { PendingConfirmations } from "../safety/confirmation/confirmations.ts";
import { StdioTransport } from "./transports/stdio-transport.ts";
import { callToolResult } from "./call-result.ts";
import { FlatSchemaValidator } from "./elicitation-validator.ts";
import { connectionPolicy } from "./person-policy.ts";
import { mcpTask, RegistryTaskStore } from "./registry-tasks.ts";
import { answerBy } from "./client-clock.ts";

/** An MCP server over a ToolHost: tools/list, tools/call, MCP tasks, cancellation, progress and notices. */
export function createMcpServer(host: ToolHost, scope?: CallScope): Server {
  const taskStore = new RegistryTaskStore(host);
  const server = new Server(SERVER_INFO, {
    capabilities: SERVER_CAPABILITIES,
    instructions: sandboxInstructions(host.sandbox),
    taskStore,
    jsonSchemaValidator: new FlatSchemaValidator(),
  });
  // Answered initialize: now what a call needs is made ready, before the first call comes.
  server.oninitialized = () => host.prepare();
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: host.tools }));
  // The SDK's own tasks/result polls; ours waits for the task's end.
  server.setRequestHandler(GetTaskPayloadRequestSchema, (request, extra) => taskStore.payload(request.params.taskId, extra.signal));
  // Confirmations belong to this connection: another daemon client cannot use them, and
  // they are gone when it disconnects (a declined CLI prompt leaves nothing pending).
  const confirmations = new PendingConfirmations();
  // Who is calling, for the audit record: the client's own name and version, and the face.
  const connection = () => {
    const client = server.getClientVersion();
    return { client: client?.name, version: client?.version, transport: scope ? "daemon" : "mcp" };
  };
  // Registered past the SDK Server's own tools/call wrapper, which parses every request a
  // second time and copies every result through its schema: callToolResult builds that shape.
  unwrappedSetRequestHandler(server)(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {}, task: asTask } = request.params;
    const deadline = answerBy({ client_timeout_seconds: scope?.clientTimeoutSeconds ?? host.config.client_timeout_seconds });
    // Who confirms, if this call needs it: the person behind this very connection when its client can ask (SPEC §19).
    const confirmationPolicy = connectionPolicy(server, scope?.confirm ?? host.config, { requestId: extra.requestId, signal: extra.signal });
    if (asTask) return startAsTask(name, args, confirmationPolicy);
    const token = request.params._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : (value: number, message: string) =>
            void extra
              .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: value, message } })
              .catch(() => {});
    return callToolResult(await host.call(name, args, { signal: extra.signal, progress, confirmations, confirmationPolicy, scope, answerBy: deadline, connection: connection() }));
  });
  /**
   * A task-augmented tools/call (SPEC §12): answered with the created task as soon as the
   * process runs; the result comes with tasks/result, and the end as a status notification.
   * The call is not tied to this request: only tasks/cancel, kill_shell or shutdown stop it.
   */
  const startAsTask = async (name: string, args: Record<string, unknown>, confirmationPolicy: ConfirmationPolicy) => {
    if (!host.tools.some((t) => t.name === name && t.execution?.taskSupport)) {
      throw new McpError(ErrorCode.MethodNotFound, `Tool '${name}' cannot run as a task; call it without \`task\` (bash and task can run as tasks).`);
    }
    const started = await host.callAsTask(name, args, { confirmations, confirmationPolicy, scope, connection: connection() });
    if (!("task" in started)) throw notStarted(started.result);
    const task = started.task;
    void started.result.then(() =>
      server.notification({ method: "notifications/tasks/status", params: mcpTask(task, host) } as ServerNotification).catch(() => {}),
    );
    return { task: mcpTask(task, host) };
  };
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

/** The SDK's Protocol.setRequestHandler, which Server overrides: the request is parsed once, the result sent as built. */
function unwrappedSetRequestHandler(server: Server): Server["setRequestHandler"] {
  return (Object.getPrototypeOf(Server.prototype).setRequestHandler as Server["setRequestHandler"]).bind(server);
}

/**
 * Connects `server` to a transport whose every message decodeFrame (json-rpc-lines.ts) has
 * already checked as JSON-RPC (json-rpc-shape.ts), and hands its requests straight to the SDK's
 * request dispatch: the SDK's own reception tells a message's kind by parsing it against up
 * to three schemas more (a response, an error, a request), ~0.06 ms of every call. A checked
 * message with a method and an id is a request (its id checked too); every other message goes
 * the SDK's way.
 */
export async function connectChecked(server: Server, transport: Transport): Promise<void> {
  await server.connect(transport);
  const received = transport.onmessage!;
  const dispatch = server as unknown as { _onrequest(message: JSONRPCMessage, extra?: MessageExtraInfo): void };
  transport.onmessage = (message, extra) => {
    if ("method" in message && "id" in message) dispatch._onrequest(message, extra);
    else received(message, extra);
  };
}

/** A task-augmented call that launched nothing: its refusal, or the confirmation it needs, as a protocol error. */
function notStarted(result: ToolResult): McpError {
  const message = typeof result.error === "string" ? result.error : `Not started: ${String(result.message)}`;
  return new McpError(ErrorCode.InvalidParams, message, result);
}

/** How long after `initialized` the stdio server makes the first command's sandbox ready. */
const WARM_AFTER_MS = 20;

/**
 * Serves MCP on stdio until stdin closes or SIGTERM/SIGINT arrives; then terminates every
 * task (foreground and background) and exits.
 */
/** `started`: a transport already reading (and answering initialize) while the server loaded. */
export async function serveStdio(host: ToolHost, started?: StdioTransport): Promise<never> {
  const server = createMcpServer(host);
  // The client's first command finds its sandbox made: made once it has had initialize and
  // tools/list answered (a command that comes sooner makes it, as it would have anyway).
  const initialized = server.oninitialized;
  server.oninitialized = () => {
    initialized?.();
    setTimeout(() => host.warm(), WARM_AFTER_MS);
  };
  let exiting = false;
  const exit = async () => {
    if (exiting) return;
    exiting = true;
    await host.close();
    process.exit(0);
  };
  const transport = started ?? new StdioTransport();
  transport.onEnd = exit;
  process.on("SIGTERM", exit);
  process.on("SIGINT", exit);
  process.on("SIGHUP", exit);
  await connectChecked(server, transport);
  return new Promise<never>(() => {});
}
