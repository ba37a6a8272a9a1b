import { z } from "zod";

/** The largest bound every harness's schema converter accepts (Gemini's int32). */
const INT32_MAX = 2 ** 31 - 1;

/**
 * The JSON Schema of a tool's input, in the subset every harness converts (SPEC §12):
 * OpenAI/Azure function calling, Gemini function declarations, older Codex. zod emits
 * `propertyNames` and a schema-valued `additionalProperties` for records (`env`) and
 * `exclusiveMinimum` for `.positive()`; those are rewritten here, once for every tool. The
 * published schema may be looser than zod's (an `env` is just an object): zod still
 * validates every call and names the field that is wrong.
 */
export function portableInputSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any", reused: "inline" }) as Record<string, unknown>;
  return portable(rest) as Record<string, unknown>;
}

function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key === "propertyNames" || key === "$defs" || key === "$ref") continue;
    if (key === "additionalProperties" && typeof value === "object") continue; // a map: published as a plain object
    if (key === "exclusiveMinimum" && typeof value === "number") out.minimum = clamp(value);
    else if (key === "exclusiveMaximum" && typeof value === "number") out.maximum = clamp(value);
    else if ((key === "minimum" || key === "maximum") && typeof value === "number") out[key] = clamp(value);
    else out[key] = portable(value);
  }
  return out;
}

const clamp = (n: number) => Math.max(-INT32_MAX, Math.min(INT32_MAX, n));
