import type { Socket } from "node:net";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * MCP over a connected stream socket (the daemon's unix socket), framed like stdio:
 * one JSON-RPC message per line. The same class serves both ends.
 */
export class SocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  private closed = false;

  constructor(private readonly socket: Socket) {}

  async start(): Promise<void> {
    this.socket.on("data", (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
        for (let m = this.buffer.readMessage(); m; m = this.buffer.readMessage()) this.onmessage?.(m);
      } catch (e) {
        this.onerror?.(e as Error);
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
    this.buffer.clear();
    this.onclose?.();
  }
}
