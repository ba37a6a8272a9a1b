import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";

/**
 * The SDK server's JSON Schema validator checks elicitation answers, and only those. The
 * schemas agent-shell requests are flat (MCP's elicitation forms: an object of primitive
 * fields), so this small validator checks them for real, and build.ts points the SDK
 * server's import of its Ajv provider here too: Ajv is neither loaded nor built at a
 * server's start (~2 ms). The SDK client (daemon-client.ts) keeps the real Ajv, for the
 * tools' output schemas.
 *
 * Understood: `type: "object"` with `properties` and `required`; fields of type boolean,
 * string (enum, minLength, maxLength), number and integer (minimum, maximum), and arrays
 * of enum strings (minItems, maxItems). A schema using anything else is refused when the
 * validator is built, so no answer is ever waved through unchecked.
 */
export class FlatSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const form = flatForm(schema);
    return (input: unknown) => {
      const problem = checkAnswer(form, input);
      return problem === null ? { valid: true, data: input as T, errorMessage: undefined } : { valid: false, data: undefined, errorMessage: problem };
    };
  }
}

/** The name the SDK server imports its default validator by (build.ts resolves it here). */
export { FlatSchemaValidator as AjvJsonSchemaValidator };

type Field = Record<string, unknown>;
interface FlatForm {
  properties: Record<string, Field>;
  required: string[];
}

const FIELD_KEYWORDS = new Set(["type", "title", "description", "default", "enum", "enumNames", "minLength", "maxLength", "format", "minimum", "maximum", "items", "minItems", "maxItems", "oneOf", "anyOf"]);

function flatForm(schema: JsonSchemaType): FlatForm {
  const s = schema as Record<string, unknown>;
  if (s.type !== "object" || typeof s.properties !== "object" || s.properties === null) {
    throw new Error("only flat object schemas (type: object with properties) are validated");
  }
  const properties = s.properties as Record<string, Field>;
  for (const [name, field] of Object.entries(properties)) {
    const unknown = Object.keys(field).filter((k) => !FIELD_KEYWORDS.has(k));
    if (unknown.length > 0) throw new Error(`field '${name}' uses ${unknown.join(", ")}, which this validator does not check`);
    if (!["boolean", "string", "number", "integer", "array"].includes(String(field.type))) throw new Error(`field '${name}' has unsupported type ${JSON.stringify(field.type)}`);
  }
  const required = Array.isArray(s.required) ? (s.required as string[]) : [];
  return { properties, required };
}

/** null when the answer fits the form; else what is wrong, in words. */
export function checkAnswer(form: FlatForm, input: unknown): string | null {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return "the answer must be an object";
  const answer = input as Record<string, unknown>;
  for (const name of form.required) if (!(name in answer)) return `'${name}' is required`;
  for (const [name, value] of Object.entries(answer)) {
    const field = form.properties[name];
    if (field === undefined) continue; // JSON Schema allows extra fields; nothing reads them
    const problem = checkField(field, value);
    if (problem) return `'${name}' ${problem}`;
  }
  return null;
}

function checkField(field: Field, value: unknown): string | null {
  switch (field.type) {
    case "boolean":
      return typeof value === "boolean" ? null : `must be true or false, got ${JSON.stringify(value)}`;
    case "string": {
      if (typeof value !== "string") return `must be a string, got ${JSON.stringify(value)}`;
      const allowed = allowedStrings(field);
      if (allowed && !allowed.includes(value)) return `must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`;
      if (typeof field.minLength === "number" && value.length < field.minLength) return `must be at least ${field.minLength} characters`;
      if (typeof field.maxLength === "number" && value.length > field.maxLength) return `must be at most ${field.maxLength} characters`;
      return null;
    }
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) return `must be a number, got ${JSON.stringify(value)}`;
      if (field.type === "integer" && !Number.isInteger(value)) return `must be a whole number, got ${value}`;
      if (typeof field.minimum === "number" && value < field.minimum) return `must be at least ${field.minimum}`;
      if (typeof field.maximum === "number" && value > field.maximum) return `must be at most ${field.maximum}`;
      return null;
    }
    case "array": {
      if (!Array.isArray(value)) return `must be a list, got ${JSON.stringify(value)}`;
      const allowed = allowedStrings((field.items ?? {}) as Field);
      const bad = value.find((v) => typeof v !== "string" || (allowed !== null && !allowed.includes(v)));
      if (bad !== undefined) return `has ${JSON.stringify(bad)}, which is not one of the choices`;
      if (typeof field.minItems === "number" && value.length < field.minItems) return `needs at least ${field.minItems} choices`;
      if (typeof field.maxItems === "number" && value.length > field.maxItems) return `allows at most ${field.maxItems} choices`;
      return null;
    }
    default:
      return "has a type this validator does not check";
  }
}

/** The choices of an enum field (`enum`, or `oneOf`/`anyOf` of `const`s); null if any string goes. */
function allowedStrings(field: Field): string[] | null {
  if (Array.isArray(field.enum)) return field.enum as string[];
  const options = (field.oneOf ?? field.anyOf) as Array<{ const?: unknown }> | undefined;
  if (Array.isArray(options)) return options.map((o) => String(o.const));
  return null;
}
