import { TOOLS } from "../tools/index.ts";
import type { ToolAnnotations } from "../tools/types.ts";
import { resultShapes } from "../tools/results/result-shapes.ts";
import { portableInputSchema, portableOutputSchema } from "./portable-schema.ts";

export interface ToolInfo {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  execution?: { taskSupport: "optional" };
  annotations: ToolAnnotations & { title: string };
}

/**
 * The tools as tools/list publishes them: names, descriptions and JSON Schemas generated
 * from the zod schemas. tool-host.ts imports this as a Bun macro, so the generation (~8 ms)
 * runs when the binary is built, not at every server start.
 */
export function toolList(): ToolInfo[] {
  return TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: published(portableInputSchema(t.schema), t.unpublished),
    outputSchema: portableOutputSchema(t.result(), resultShapes().errorResult),
    annotations: { title: t.title, ...t.annotations },
    ...(t.taskSupport ? { execution: { taskSupport: t.taskSupport } } : {}),
  }));
}

/** The input schema without the parameters a tool keeps for agent-shell's own command line. */
function published(schema: Record<string, unknown>, unpublished: string[] = []): Record<string, unknown> {
  const properties = { ...(schema.properties as Record<string, unknown>) };
  for (const name of unpublished) delete properties[name];
  return { ...schema, properties };
}
