import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { decodeFrame, MAX_MESSAGE_BYTES } from "./json-rpc-lines.ts";
import { LineFramer } from "./line-framer.ts";

/**
 * MCP over stdin/stdout, one JSON-RPC message per line. Unlike the SDK's stdio transport it
 * keeps reading after a bad line: an oversized line is answered and skipped without being
 * buffered, invalid JSON gets the parse error, and stdin's EOF is still seen (SPEC §14).
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly framer = new LineFramer(MAX_MESSAGE_BYTES);

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
  ) {}

  async start(): Promise<void> {
    this.stdin.on("data", (chunk: Buffer) => {
      for (const frame of this.framer.push(chunk)) {
        const decoded = decodeFrame(frame);
        if (!decoded) continue;
        if ("reply" in decoded) void this.send(decoded.reply).catch((e) => this.onerror?.(e as Error));
        else this.onmessage?.(decoded.message);
      }
    });
    this.stdin.on("error", (e: Error) => this.onerror?.(e));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(serializeMessage(message))) resolve();
      else this.stdout.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}
