import type { Socket } from "node:net";
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { decodeFrame, MAX_MESSAGE_BYTES } from "./json-rpc-lines.ts";
import { LineFramer } from "./line-framer.ts";
import { PacedDispatch } from "./paced-dispatch.ts";

/**
 * A daemon client's first line: the token alone, or JSON naming also where its calls may
 * run (`cwd`, `allow`), which the daemon enforces for that connection only.
 */
export interface DaemonHello {
  token: string;
  cwd?: string;
  allow?: string[];
  /** The connection's default sandbox mode (validated by the daemon). */
  sandbox?: string;
  /** Who confirms this connection's calls, and how long its person has (SPEC §19; validated by the daemon). */
  confirm_by?: string;
  confirm_timeout_seconds?: number;
  /** Its client's own tool timeout (SPEC §23; validated by the daemon). */
  client_timeout_seconds?: number;
}

function parseHello(line: string): DaemonHello | null {
  if (!line.startsWith("{")) return { token: line };
  try {
    const v = JSON.parse(line) as Record<string, unknown>;
    if (typeof v.token !== "string") return null;
    if (v.cwd !== undefined && typeof v.cwd !== "string") return null;
    if (v.allow !== undefined && !(Array.isArray(v.allow) && v.allow.every((a) => typeof a === "string"))) return null;
    if (v.sandbox !== undefined && typeof v.sandbox !== "string") return null;
    if (v.confirm_by !== undefined && typeof v.confirm_by !== "string") return null;
    if (v.confirm_timeout_seconds !== undefined && typeof v.confirm_timeout_seconds !== "number") return null;
    if (v.client_timeout_seconds !== undefined && typeof v.client_timeout_seconds !== "number") return null;
    return {
      token: v.token,
      cwd: v.cwd as string | undefined,
      allow: v.allow as string[] | undefined,
      sandbox: v.sandbox as string | undefined,
      confirm_by: v.confirm_by as string | undefined,
      confirm_timeout_seconds: v.confirm_timeout_seconds as number | undefined,
      client_timeout_seconds: v.client_timeout_seconds as number | undefined,
    };
  } catch {
    return null;
  }
}

/**
 * MCP over a connected stream socket (the daemon's unix socket), framed like stdio:
 * one JSON-RPC message per line, with the same bounded framing, error replies and pacing
 * of bursts as stdio. The same class serves both ends.
 */
export class SocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly framer = new LineFramer(MAX_MESSAGE_BYTES);
  private readonly inbox = new PacedDispatch((message) => this.onmessage?.(message));
  private closed = false;

  /** The daemon's end checks the first line against `token`; a client sends it as its first line. */
  private awaitingToken: string | null;
  private refused = false;

  constructor(
    private readonly socket: Socket,
    private readonly token: { expect?: string; send?: string; onHello?: (hello: DaemonHello) => void } = {},
  ) {
    this.awaitingToken = token.expect ?? null;
  }

  async start(): Promise<void> {
    if (this.token.send !== undefined) this.socket.write(`${this.token.send}\n`);
    this.socket.on("data", (chunk: Buffer) => {
      if (this.refused) return; // whatever else a refused connection sends is ignored
      for (const frame of this.framer.push(chunk)) {
        if (this.awaitingToken !== null) {
          const hello = frame.kind === "line" ? parseHello(frame.text) : null;
          if (!hello || hello.token !== this.awaitingToken) return void this.refuse();
          this.awaitingToken = null;
          this.token.onHello?.(hello);
          continue;
        }
        const decoded = decodeFrame(frame);
        if (!decoded) continue;
        if ("reply" in decoded) void this.send(decoded.reply).catch(() => {});
        else this.inbox.push(decoded.message);
      }
    });
    this.socket.on("error", (e) => this.onerror?.(e));
    this.socket.on("close", () => {
      this.inbox.drain(); // what arrived before the end is handled, as it would have been at once
      this.finish();
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error("the connection is closed"));
      this.socket.write(serializeMessage(message), (e) => (e ? reject(e) : resolve()));
    });
  }

  /** A connection without the daemon's token is told why, then closed. */
  private refuse(): void {
    this.refused = true;
    const message = {
      jsonrpc: "2.0" as const,
      id: null,
      error: { code: -32001, message: "This connection did not present the daemon's token (the daemon.sock.token file beside the socket); connect through the agent-shell CLI." },
    };
    this.socket.end(serializeMessage(message as unknown as JSONRPCMessage), () => this.finish());
  }

  async close(): Promise<void> {
    this.socket.destroy();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
