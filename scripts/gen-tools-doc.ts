/**
 * Generates docs/tools.md from the tools' zod schemas, so the reference never drifts
 * (tests/package/docs.test.ts fails when the committed file is stale). Run: bun run docs
 */
import { resolve } from "node:path";
import { z } from "zod";
import { TOOLS } from "../src/tools/index.ts";

type JsonSchema = { type?: string | string[]; enum?: unknown[]; items?: JsonSchema; description?: string; additionalProperties?: JsonSchema | boolean; anyOf?: JsonSchema[]; minimum?: number; maximum?: number };

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" \\| ");
  if (s.anyOf) return s.anyOf.map(typeOf).join(" \\| ");
  if (s.type === "array") return `array of ${typeOf(s.items ?? {})}`;
  if (s.type === "object") return "object of strings";
  let t = String(s.type ?? "any");
  const min = s.minimum !== undefined && s.minimum > Number.MIN_SAFE_INTEGER ? s.minimum : undefined;
  const max = s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER ? s.maximum : undefined;
  if (min !== undefined && max !== undefined) t += ` ${min}…${max}`;
  else if (min !== undefined) t += ` ≥ ${min}`;
  else if (max !== undefined) t += ` ≤ ${max}`;
  return t;
}

export function renderToolsDoc(): string {
  const out = ["# Tools reference", "", "Generated from the zod schemas by `bun run docs`; do not edit by hand.", ""];
  for (const tool of TOOLS) {
    const schema = z.toJSONSchema(tool.schema, { io: "input", unrepresentable: "any" }) as { properties?: Record<string, JsonSchema>; required?: string[] };
    out.push(`## \`${tool.name}\``, "", tool.description, "", "| parameter | type | required | description |", "|---|---|---|---|");
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      const required = schema.required?.includes(name) ? "yes" : "";
      out.push(`| \`${name}\` | ${typeOf(prop)} | ${required} | ${(prop.description ?? "").replace(/\|/g, "\\|")} |`);
    }
    out.push("");
  }
  return out.join("\n");
}

if (import.meta.main) {
  await Bun.write(resolve(import.meta.dir, "../docs/tools.md"), renderToolsDoc());
  console.error("wrote docs/tools.md");
}
