import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { ToolHost } from "../../host/tool-host.ts";
import { createMcpServer } from "../server.ts";
import { SessionEventStore } from "./event-store.ts";

/**
 * One Streamable HTTP session (`Mcp-Session-Id`): its own MCP server over the shared
 * ToolHost (so its own pending confirmations, the same registry as every other session), its
 * own resumable event store, and how long it has had no request and no open stream (so an
 * abandoned session can expire). Closing it (DELETE, expiry, shutdown) aborts its in-flight
 * calls, which ends their foreground commands.
 */
export class HttpSession {
  private readonly transport: WebStandardStreamableHTTPServerTransport;
  private readonly server: Server;
  private openStreams = 0;
  private lastSeen = Date.now();
  private closed = false;

  private constructor(host: ToolHost, onInitialized: (id: string, session: HttpSession) => void, onClosed: (session: HttpSession) => void) {
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => onInitialized(id, this),
      eventStore: new SessionEventStore(),
    });
    // Set before connect: the SDK chains it with its own, which aborts the in-flight calls.
    this.transport.onclose = () => {
      this.closed = true;
      onClosed(this);
    };
    this.server = createMcpServer(host);
  }

  /** A session for a request that carries no session id (an initialize, if the client is right). */
  static async open(host: ToolHost, onInitialized: (id: string, session: HttpSession) => void, onClosed: (session: HttpSession) => void): Promise<HttpSession> {
    const session = new HttpSession(host, onInitialized, onClosed);
    await session.server.connect(session.transport);
    return session;
  }

  get id(): string | undefined {
    return this.transport.sessionId;
  }

  /** Answers one HTTP request of this session, counting its response stream as open until it ends. */
  async handle(req: Request): Promise<Response> {
    this.lastSeen = Date.now();
    this.openStreams++;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      this.openStreams--;
      this.lastSeen = Date.now();
    };
    req.signal.addEventListener("abort", finish, { once: true });
    let res: Response;
    try {
      res = await this.transport.handleRequest(req);
    } catch (e) {
      finish();
      throw e;
    }
    return trackBody(res, finish);
  }

  /** Milliseconds with no request and no open stream (0 while one is open). */
  idleMs(now: number): number {
    return this.openStreams > 0 ? 0 : now - this.lastSeen;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.transport.close().catch(() => {});
    await this.server.close().catch(() => {});
  }
}

/** The same response, calling `onEnd` once its body has been read to the end or cancelled. */
function trackBody(res: Response, onEnd: () => void): Response {
  if (!res.body) {
    onEnd();
    return res;
  }
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          onEnd();
          controller.close();
        } else controller.enqueue(value);
      } catch (e) {
        onEnd();
        controller.error(e);
      }
    },
    cancel(reason) {
      onEnd();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
