/**
 * The hand-written JSON-RPC message check the stdio and daemon transports use in place of
 * the SDK's JSONRPCMessageSchema: for every message below (the kinds MCP clients send,
 * and the ways a line can be almost one), both give the same answer.
 */
import { describe, expect, test } from "bun:test";
import { JSONRPCMessageSchema, RELATED_TASK_META_KEY } from "@modelcontextprotocol/sdk/types.js";
import { isJsonRpcMessage } from "../../src/mcp/transports/json-rpc-shape.ts";

const request = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bash", arguments: { command: "true" } } };
const notification = { jsonrpc: "2.0", method: "notifications/initialized" };
const result = { jsonrpc: "2.0", id: "a", result: { content: [] } };
const error = { jsonrpc: "2.0", id: 7, error: { code: -32600, message: "no" } };

const valid: Array<[string, unknown]> = [
  ["a request", request],
  ["a request with a string id", { ...request, id: "x-1" }],
  ["a request without params", { jsonrpc: "2.0", id: 0, method: "ping" }],
  ["a request with a progress token", { ...request, params: { ...request.params, _meta: { progressToken: "p" } } }],
  ["a request with a numeric progress token", { ...request, params: { _meta: { progressToken: 3, other: true } } }],
  ["a request with a related task", { ...request, params: { _meta: { [RELATED_TASK_META_KEY]: { taskId: "t1", more: 1 } } } }],
  ["a task-augmented request", { ...request, params: { ...request.params, task: { ttl: 1000 } } }],
  ["a notification", notification],
  ["a notification with params", { ...notification, method: "notifications/cancelled", params: { requestId: 1, reason: "x" } }],
  ["a result", result],
  ["an empty result with _meta", { jsonrpc: "2.0", id: 2, result: { _meta: { progressToken: 1 } } }],
  ["an elicitation answer", { jsonrpc: "2.0", id: 3, result: { action: "accept", content: { confirm: true } } }],
  ["an error", error],
  ["an error with data and no id", { jsonrpc: "2.0", error: { code: 1, message: "m", data: [1] } }],
  ["an error with extra fields in it", { jsonrpc: "2.0", id: 1, error: { code: 1, message: "m", extra: 1 } }],
];

const invalid: Array<[string, unknown]> = [
  ["null", null],
  ["a number", 1],
  ["a string", "x"],
  ["an array (a batch)", [request]],
  ["an empty object", {}],
  ["no jsonrpc", { id: 1, method: "ping" }],
  ["jsonrpc 1.0", { ...request, jsonrpc: "1.0" }],
  ["a numeric jsonrpc", { ...request, jsonrpc: 2 }],
  ["a fractional id", { ...request, id: 1.5 }],
  ["an id past the safe integers", { ...request, id: 2 ** 60 }],
  ["an infinite id (1e999)", { ...request, id: Number.POSITIVE_INFINITY }],
  ["a null id", { ...request, id: null }],
  ["an object id", { ...request, id: {} }],
  ["a boolean id", { ...request, id: true }],
  ["a numeric method", { ...request, method: 5 }],
  ["params as an array", { ...request, params: [1, 2] }],
  ["params as a string", { ...request, params: "x" }],
  ["null params", { ...request, params: null }],
  ["an unknown top-level field", { ...request, extra: 1 }],
  ["a notification with an unknown field", { ...notification, result: {} }],
  ["_meta as an array", { ...request, params: { _meta: [] } }],
  ["a boolean progress token", { ...request, params: { _meta: { progressToken: true } } }],
  ["a fractional progress token", { ...notification, params: { _meta: { progressToken: 0.5 } } }],
  ["a related task without its id", { ...request, params: { _meta: { [RELATED_TASK_META_KEY]: {} } } }],
  ["a related task with a numeric id", { ...request, params: { _meta: { [RELATED_TASK_META_KEY]: { taskId: 1 } } } }],
  ["a result without an id", { jsonrpc: "2.0", result: {} }],
  ["a result that is an array", { ...result, result: [] }],
  ["a result that is null", { ...result, result: null }],
  ["a result with a bad _meta", { ...result, result: { _meta: 1 } }],
  ["a result with an error too", { ...result, error: error.error }],
  ["an error with a null id", { ...error, id: null }],
  ["an error with a fractional code", { ...error, error: { code: 1.5, message: "m" } }],
  ["an error without a message", { ...error, error: { code: 1 } }],
  ["an error that is a string", { ...error, error: "bad" }],
  ["an error with an unknown top-level field", { ...error, method: "x" }],
  ["a __proto__ field", JSON.parse('{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{}}')],
];

describe("isJsonRpcMessage agrees with the SDK's JSONRPCMessageSchema", () => {
  test.each(valid)("%s is a message", (_, message) => {
    expect(JSONRPCMessageSchema.safeParse(message).success).toBe(true);
    expect(isJsonRpcMessage(message)).toBe(true);
  });

  test.each(invalid)("%s is not", (_, message) => {
    expect(JSONRPCMessageSchema.safeParse(message).success).toBe(false);
    expect(isJsonRpcMessage(message)).toBe(false);
  });
});
