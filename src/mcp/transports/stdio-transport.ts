import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { decodeFrame, MAX_MESSAGE_BYTES } from "./json-rpc-lines.ts";
import { LineFramer } from "./line-framer.ts";
import { PacedDispatch } from "./paced-dispatch.ts";

/**
 * MCP over stdin/stdout, one JSON-RPC message per line. Unlike the SDK's stdio transport it
 * keeps reading after a bad line: an oversized line is answered and skipped without being
 * buffered, invalid JSON gets the parse error, and stdin's EOF is still seen (SPEC §14).
 *
 * Requests that arrive together are handed on one per turn of the event loop (PacedDispatch):
 * the first of a burst is answered early.
 *
 * It reads and writes through Bun's own file I/O, not process.stdin/stdout: those load
 * Node's stream modules, ~3–7 ms of every server start.
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly framer = new LineFramer(MAX_MESSAGE_BYTES);
  private readonly out = Bun.stdout.writer();
  private readonly inbox = new PacedDispatch((message) => this.onmessage?.(message));
  /** Writes in order; a failed write (the client went away) goes to onerror, not to the caller. */
  private writing: Promise<unknown> = Promise.resolve();
  private ended = false;

  /** Called once stdin ends (EOF, or a read error). */
  constructor(private readonly onEnd: () => void = () => {}) {}

  async start(): Promise<void> {
    void this.read();
  }

  private async read(): Promise<void> {
    try {
      let dropped = 0;
      for await (const chunk of Bun.stdin.stream()) {
        // An oversized line's chunks are garbage as soon as they are read: collected every
        // 16 MiB, a 200 MB line does not grow the server by its size before the collector runs.
        if (this.framer.discarding && (dropped += chunk.length) >= 16 * 1024 * 1024) {
          dropped = 0;
          Bun.gc(false);
        }
        for (const frame of this.framer.push(chunk)) {
          const decoded = decodeFrame(frame);
          if (!decoded) continue;
          if ("reply" in decoded) void this.send(decoded.reply);
          else this.inbox.push(decoded.message);
        }
      }
    } catch (e) {
      this.onerror?.(e as Error);
    }
    this.inbox.drain();
    this.end();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const sent = this.writing.then(async () => {
      this.out.write(serializeMessage(message));
      await this.out.flush();
    });
    this.writing = sent.catch((e) => this.onerror?.(e as Error));
    return this.writing.then(() => {});
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}
