import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { isJsonRpcMessage } from "./json-rpc-shape.ts";
import type { Frame } from "./line-framer.ts";

/** MCP's stdio framing limit, the one stock clients enforce too (10 MiB). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/**
 * One framed line as a JSON-RPC message, or the error response owed to the peer: a client
 * that sent something unreadable gets an answer instead of waiting forever.
 */
export function decodeFrame(frame: Frame): { message: JSONRPCMessage } | { reply: JSONRPCMessage } | null {
  if (frame.kind === "oversized") {
    return reply(null, INVALID_REQUEST, `Request too large: one message is limited to ${frame.limit} bytes; the line was discarded. Send smaller messages.`);
  }
  if (frame.text.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(frame.text);
  } catch (e) {
    return reply(null, PARSE_ERROR, `Parse error: the line is not valid JSON (${(e as Error).message}); send one JSON-RPC message per line.`);
  }
  if (isJsonRpcMessage(value)) return { message: value };
  // JSON-RPC 2.0: an id that cannot be trusted from an invalid request is answered as null.
  return reply(
    null,
    INVALID_REQUEST,
    "Invalid Request: the line is JSON but not a JSON-RPC 2.0 message (jsonrpc: \"2.0\", method, and id for a request).",
  );
}

function reply(id: null, code: number, message: string): { reply: JSONRPCMessage } {
  // JSON-RPC 2.0 answers an unidentifiable request with id null; the SDK's type lacks that.
  return { reply: { jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage };
}
