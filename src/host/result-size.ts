import { truncationMarker } from "../background/output-view.ts";
import type { ToolResult } from "../tools/errors.ts";

/** Serialized size limit of one result; an MCP message carries it about twice (text + structured). */
export const MAX_RESULT_BYTES = 2_500_000;

/**
 * Keeps a result under MAX_RESULT_BYTES once serialized. Byte limits (max_bytes) bound
 * the raw text, but JSON escaping can blow control characters up six-fold; the longest
 * strings are then cut (head + tail around a truncation line) until the result fits.
 */
export function capResultSize(result: ToolResult): ToolResult {
  let size = JSON.stringify(result).length;
  for (let round = 0; size > MAX_RESULT_BYTES && round < 8; round++) {
    const longest = longestString(result);
    if (!longest) break;
    const { holder, key, value } = longest;
    // Scale the string by the overshoot; escaped characters make this approximate, hence the loop.
    const keep = Math.max(0, Math.floor(value.length * (MAX_RESULT_BYTES / size) * 0.9) - 200);
    const head = value.slice(0, Math.floor(keep / 2));
    const tail = value.slice(value.length - Math.ceil(keep / 2));
    holder[key] = `${head}\n${truncationMarker(Buffer.byteLength(value))}\n${tail}`;
    if (/^(stdout|stderr)$/.test(key)) holder[`${key}_truncated`] = true;
    size = JSON.stringify(result).length;
  }
  return result;
}

function longestString(node: unknown): { holder: Record<string, unknown>; key: string; value: string } | null {
  let best: { holder: Record<string, unknown>; key: string; value: string } | null = null;
  const visit = (obj: unknown) => {
    if (!obj || typeof obj !== "object") return;
    for (const [key, value] of Object.entries(obj as Record<string, unknown>)) {
      if (typeof value === "string") {
        if (!best || value.length > best.value.length) best = { holder: obj as Record<string, unknown>, key, value };
      } else visit(value);
    }
  };
  visit(node);
  return best;
}
