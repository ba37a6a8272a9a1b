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
  return lean(portable(jsonSchema(schema, "input"), clamp)) as Record<string, unknown>;
}

/**
 * A harness pays for the tool definitions on every request (SPEC §15): what zod checks at
 * call time anyway and a model needs no help with is left out of the published input schema —
 * `minLength: 1`, regex `pattern`s, and a `default` the description already states.
 */
function lean(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(lean);
  if (node === null || typeof node !== "object") return node;
  const n = node as Record<string, unknown>;
  const stated = typeof n.description === "string" && n.description.includes("(default:");
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(n)) {
    if ((key === "minLength" && value === 1) || key === "pattern" || (key === "default" && stated)) continue;
    out[key] = lean(value);
  }
  return out;
}

/**
 * A tool's MCP outputSchema: its success shapes or the §2 error shape, in the same subset.
 * Result objects are open (`additionalProperties: {}` is dropped, which means the same),
 * and zod's implicit ±2^53 integer bounds are left out rather than clamped: a byte count
 * may exceed int32.
 */
export function portableOutputSchema(result: z.ZodType, error: z.ZodType): Record<string, unknown> {
  const shapes = result instanceof z.ZodUnion ? [...result.options, error] : [result, error];
  const schema = portable(jsonSchema(z.union(shapes as [z.ZodType, z.ZodType]), "output"), (n) =>
    Math.abs(n) === Number.MAX_SAFE_INTEGER ? undefined : n,
  ) as Record<string, unknown>;
  return { type: "object", ...schema }; // MCP wants an object schema at the root
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any", reused: "inline" }) as Record<string, unknown>;
  return rest;
}

function portable(node: unknown, bound: (n: number) => number | undefined): unknown {
  if (Array.isArray(node)) return node.map((n) => portable(n, bound));
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  const setBound = (key: "minimum" | "maximum", n: number) => {
    const b = bound(n);
    if (b !== undefined) out[key] = b;
  };
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key === "propertyNames" || key === "$defs" || key === "$ref") continue;
    if (key === "additionalProperties" && typeof value === "object") continue; // a map: published as a plain object
    if (key === "exclusiveMinimum" && typeof value === "number") setBound("minimum", value);
    else if (key === "exclusiveMaximum" && typeof value === "number") setBound("maximum", value);
    else if ((key === "minimum" || key === "maximum") && typeof value === "number") setBound(key, value);
    else out[key] = portable(value, bound);
  }
  return out;
}

/** Bounds clamped to int32; one at (or past) int32's own end says nothing and is left out (fewer tokens). */
const clamp = (n: number) => (Math.abs(n) >= INT32_MAX ? undefined : n);
