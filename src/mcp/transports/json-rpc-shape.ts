import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { sdkConstants } from "../sdk-constants.ts" with { type: "macro" };

/** (The SDK's constant, written in when the binary is built: reading a line loads none of the SDK.) */
const RELATED_TASK_META_KEY = sdkConstants().relatedTaskMetaKey;

/**
 * Whether a parsed JSON value is a JSON-RPC 2.0 message as MCP defines it: the SDK's
 * JSONRPCMessageSchema (a request, a notification, a result or an error), checked by hand.
 * Its zod union took 0.06–0.08 ms more of every call (traced) on a server whose caches the
 * command before had just evicted. tests/mcp/json-rpc-shape.test.ts holds both to the same answers.
 */
export function isJsonRpcMessage(value: unknown): value is JSONRPCMessage {
  if (!isPlainObject(value) || value.jsonrpc !== "2.0") return false;
  if ("method" in value) {
    if (typeof value.method !== "string" || !onlyKeys(value, "id" in value ? REQUEST_KEYS : NOTIFICATION_KEYS)) return false;
    if ("id" in value && !isRequestId(value.id)) return false;
    return !("params" in value) || (isPlainObject(value.params) && metaIsValid(value.params));
  }
  if ("result" in value) return onlyKeys(value, RESULT_KEYS) && isRequestId(value.id) && isPlainObject(value.result) && metaIsValid(value.result);
  if ("error" in value) {
    const error = value.error;
    return (
      onlyKeys(value, ERROR_KEYS) &&
      (!("id" in value) || isRequestId(value.id)) &&
      isPlainObject(error) &&
      Number.isSafeInteger(error.code) &&
      typeof error.message === "string"
    );
  }
  return false;
}

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const NOTIFICATION_KEYS = new Set(["jsonrpc", "method", "params"]);
const RESULT_KEYS = new Set(["jsonrpc", "id", "result"]);
const ERROR_KEYS = new Set(["jsonrpc", "id", "error"]);

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function onlyKeys(value: Plain, allowed: Set<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

/** A request id: a string or a (safe) integer. */
function isRequestId(value: unknown): boolean {
  return typeof value === "string" || Number.isSafeInteger(value);
}

/** `_meta` of params or a result, when present: an object, its progress token and related task well formed. */
function metaIsValid(holder: Plain): boolean {
  if (!("_meta" in holder)) return true;
  const meta = holder._meta;
  if (!isPlainObject(meta)) return false;
  if ("progressToken" in meta && !isRequestId(meta.progressToken)) return false;
  if (!(RELATED_TASK_META_KEY in meta)) return true;
  const related = meta[RELATED_TASK_META_KEY];
  return isPlainObject(related) && typeof related.taskId === "string";
}
