import type { ToolResult } from "../errors.ts";

/** Serialized size limit of one result; an MCP message carries it about twice (text + structured). */
export const MAX_RESULT_BYTES = 2_500_000;
/** Strings shorter than this are never cut. */
const SMALL = 10_000;

/**
 * Keeps a result under MAX_RESULT_BYTES once serialized. Per-stream byte limits bound the
 * raw text, but several tasks in one result, or JSON escaping (six-fold for control
 * characters), can exceed it; then every long string is cut in proportion (head + tail
 * around a truncation line) until the result fits.
 */
export function capResultSize(result: ToolResult): ToolResult {
  let size = serializedBytes(result);
  for (let round = 0; size > MAX_RESULT_BYTES && round < 8; round++) {
    const scale = (MAX_RESULT_BYTES / size) * 0.9;
    for (const { holder, key, value } of longStrings(result)) {
      const keep = Math.floor(value.length * scale);
      const head = value.slice(0, Math.floor(keep / 2));
      const tail = value.slice(value.length - Math.ceil(keep / 2));
      holder[key] = `${head}\n[… ${Buffer.byteLength(value) - Buffer.byteLength(head) - Buffer.byteLength(tail)} bytes truncated to fit the result size limit (${Buffer.byteLength(value)} total) …]\n${tail}`;
      if (key === "stdout" || key === "stderr") holder[`${key}_truncated`] = true;
    }
    size = serializedBytes(result);
  }
  return result;
}

function serializedBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
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
