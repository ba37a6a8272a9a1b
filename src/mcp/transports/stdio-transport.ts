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
 * Node's stream modules, ~3–7 ms of every server start. It imports nothing of the SDK at run
 * time, so it can start reading before the SDK has loaded (see `answerEarly`).
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly framer = new LineFramer(MAX_MESSAGE_BYTES);
  private readonly out = Bun.stdout.writer();
  private readonly inbox = new PacedDispatch((message) => this.deliver(message));
  /** Writes in order; a failed write (the client went away) goes to onerror, not to the caller. */
  private writing: Promise<unknown> = Promise.resolve();
  private ended = false;
  private reading = false;
  /** Messages read before the server took the transport (start()). */
  private held: JSONRPCMessage[] | null = [];
  private early?: (message: JSONRPCMessage) => JSONRPCMessage | null;
  /** Resolves answerEarly's promise: the first message was handled (and its early answer written). */
  private earlyDone?: () => void;
  /** The early answer sent for this request id, so that the server's own answer to it is not sent again. */
  private answered: { id: string | number; text: string } | null = null;

  private endListener: (() => void) | null = null;

  /** Called once stdin ends (EOF, or a read error); at once if it has already. */
  set onEnd(listener: () => void) {
    this.endListener = listener;
    if (this.ended) listener();
  }

  /**
   * Starts reading before the server is there: `answer` may answer the first message at once
   * (initialize, while the SDK is still loading); every message still reaches the server,
   * and its own answer to that one is dropped (and compared: they must agree).
   */
  answerEarly(answer: (message: JSONRPCMessage) => JSONRPCMessage | null): Promise<void> {
    this.early = answer;
    const answered = new Promise<void>((resolve) => (this.earlyDone = resolve));
    this.begin();
    return answered;
  }

  async start(): Promise<void> {
    const held = this.held ?? [];
    this.held = null;
    for (const message of held) this.onmessage?.(message);
    this.begin();
  }

  private begin(): void {
    if (this.reading) return;
    this.reading = true;
    void this.read();
  }

  private deliver(message: JSONRPCMessage): void {
    const early = this.early;
    this.early = undefined;
    const reply = early?.(message);
    if (reply && "id" in reply && reply.id !== undefined) {
      this.answered = { id: reply.id, text: JSON.stringify(outcome(reply)) };
      void this.write(reply).then(this.earlyDone);
    } else this.earlyDone?.();
    if (this.held) this.held.push(message);
    else this.onmessage?.(message);
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
    if (this.answered && "id" in message && message.id === this.answered.id && !("method" in message)) {
      // Answered already: the server's answer must be the very one sent (tests/mcp/early-initialize.test.ts).
      if (JSON.stringify(outcome(message)) !== this.answered.text) process.stderr.write(`agent-shell: the early answer to initialize differed from the server's: ${JSON.stringify(message)}\n`);
      this.answered = null;
      return Promise.resolve();
    }
    return this.write(message);
  }

  private write(message: JSONRPCMessage): Promise<void> {
    const sent = this.writing.then(async () => {
      this.out.write(`${JSON.stringify(message)}\n`);
      await this.out.flush();
    });
    this.writing = sent.catch((e) => this.onerror?.(e as Error));
    return this.writing.then(() => {});
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.endListener?.();
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

/** What an answer says (its result or error), whatever the order of its envelope's keys. */
function outcome(message: JSONRPCMessage): unknown {
  return "result" in message ? message.result : "error" in message ? message.error : message;
}
