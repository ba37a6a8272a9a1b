import type { ToolResult } from "../errors.ts";

/** Serialized size limit of one result; an MCP message carries it about twice (text + structured). */
export const MAX_RESULT_BYTES = 2_500_000;
/** Strings shorter than this are never cut. */
const SMALL = 10_000;

/**
 * The JSON text of each result capResultSize measured last: the MCP text content is that
 * very text, so a large result (a task_list of hundreds) is serialized once, not twice.
 * Results are not changed after capResultSize (it is the last step of a call).
 */
const texts = new WeakMap<object, string>();

/** A result's JSON text (the one capResultSize measured, when it did). */
export function resultJson(result: ToolResult): string {
  return texts.get(result) ?? JSON.stringify(result);
}

/**
 * Keeps a result under MAX_RESULT_BYTES once serialized. Per-stream byte limits bound the
 * raw text, but several tasks in one result, or JSON escaping (six-fold for control
 * characters), can exceed it; then every long string is cut in proportion (head + tail
 * around a truncation line) until the result fits. A result that is cut is a copy: the
 * one given may share objects with the tasks it describes.
 */
export function capResultSize(given: ToolResult): ToolResult {
  let text = JSON.stringify(given);
  let size = byteLength(text);
  let result = given;
  if (size > MAX_RESULT_BYTES) result = JSON.parse(text) as ToolResult;
  for (let round = 0; size > MAX_RESULT_BYTES && round < 8; round++) {
    const scale = (MAX_RESULT_BYTES / size) * 0.9;
    for (const { holder, key, value } of longStrings(result)) {
      const keep = Math.floor(value.length * scale);
      const head = value.slice(0, Math.floor(keep / 2));
      const tail = value.slice(value.length - Math.ceil(keep / 2));
      holder[key] = `${head}\n[… ${Buffer.byteLength(value) - Buffer.byteLength(head) - Buffer.byteLength(tail)} bytes truncated to fit the result size limit (${Buffer.byteLength(value)} total) …]\n${tail}`;
      if (key === "stdout" || key === "stderr") holder[`${key}_truncated`] = true;
    }
    text = JSON.stringify(result);
    size = byteLength(text);
  }
  texts.set(result, text);
  return result;
}

/**
 * The UTF-8 length where it matters: a UTF-16 unit takes at most three UTF-8 bytes, so a text
 * of up to a third of the limit is under it whatever it holds, and is not counted.
 */
function byteLength(text: string): number {
  return text.length * 3 <= MAX_RESULT_BYTES ? text.length : Buffer.byteLength(text);
}

function longStrings(node: unknown): Array<{ holder: Record<string, unknown>; key: string; value: string }> {
  const found: Array<{ holder: Record<string, unknown>; key: string; value: string }> = [];
  const visit = (obj: unknown) => {
    if (!obj || typeof obj !== "object") return;
    for (const [key, value] of Object.entries(obj as Record<string, unknown>)) {
      if (typeof value === "string") {
        if (value.length > SMALL) found.push({ holder: obj as Record<string, unknown>, key, value });
      } else visit(value);
    }
  };
  visit(node);
  return found;
}
