import type { Socket } from "node:net";
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { decodeFrame, MAX_MESSAGE_BYTES } from "./json-rpc-lines.ts";
import { LineFramer } from "./line-framer.ts";

/**
 * MCP over a connected stream socket (the daemon's unix socket), framed like stdio:
 * one JSON-RPC message per line, with the same bounded framing and error replies as stdio.
 * The same class serves both ends.
 */
export class SocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly framer = new LineFramer(MAX_MESSAGE_BYTES);
  private closed = false;

  constructor(private readonly socket: Socket) {}

  async start(): Promise<void> {
    this.socket.on("data", (chunk: Buffer) => {
      for (const frame of this.framer.push(chunk)) {
        const decoded = decodeFrame(frame);
        if (!decoded) continue;
        if ("reply" in decoded) void this.send(decoded.reply).catch(() => {});
        else this.onmessage?.(decoded.message);
      }
    });
    this.socket.on("error", (e) => this.onerror?.(e));
    this.socket.on("close", () => this.finish());
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error("the connection is closed"));
      this.socket.write(serializeMessage(message), (e) => (e ? reject(e) : resolve()));
    });
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
