import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { FarPipe } from "../../runtime/far/pipe.ts";

const NEWLINE = 0x0a;
/** The launcher's status line is short; anything longer is not agent-shell talking. */
const MAX_STATUS_BYTES = 4096;

/**
 * An MCP client transport over a far-side pipe. The far launcher first writes one status
 * line (see agent-scripts.ts): `status` resolves with it, and only then does the pipe
 * carry line-framed JSON-RPC, as `agent-shell mcp --shared` speaks on stdio.
 */
export class PipeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The far launcher's first line; rejects if the pipe closes (or babbles) before it. */
  readonly status: Promise<string>;
  private readonly buffer = new ReadBuffer();
  private head: Uint8Array[] | null = [];
  private headBytes = 0;
  private closed = false;

  constructor(readonly pipe: FarPipe) {
    let settle!: { ok: (line: string) => void; fail: (e: Error) => void };
    this.status = new Promise<string>((ok, fail) => (settle = { ok, fail }));
    this.status.catch(() => {});
    pipe.onData((chunk) => {
      if (this.head === null) return this.receive(chunk);
      const nl = chunk.indexOf(NEWLINE);
      if (nl === -1) {
        this.head.push(chunk.slice());
        this.headBytes += chunk.length;
        if (this.headBytes > MAX_STATUS_BYTES) settle.fail(new Error(`unexpected output: ${Buffer.concat(this.head).toString("utf8").slice(0, 200)}`));
        return;
      }
      const line = Buffer.concat([...this.head, chunk.subarray(0, nl)]).toString("utf8").trim();
      this.head = null;
      settle.ok(line);
      if (nl + 1 < chunk.length) this.receive(chunk.subarray(nl + 1));
    });
    void pipe.closed.then(() => {
      settle.fail(new Error("the pipe closed before the far side answered"));
      this.finish();
    });
  }

  private receive(chunk: Uint8Array): void {
    try {
      this.buffer.append(Buffer.from(chunk));
    } catch (e) {
      return this.onerror?.(e as Error);
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (e) {
        this.onerror?.(e as Error);
        continue;
      }
      if (message === null) break;
      this.onmessage?.(message);
    }
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error("the pipe to the far side is closed");
    this.pipe.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.pipe.close();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
