import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";

/**
 * The SDK server's JSON Schema validator checks elicitation answers, and only those; this
 * server never elicits. So it gets this one, and build.ts points the SDK server's import of
 * its Ajv provider here too: Ajv is then neither loaded nor built at a server's start (~2 ms).
 * The SDK client (daemon-client.ts) keeps the real Ajv, for the tools' output schemas.
 */
export class NoElicitationValidator implements jsonSchemaValidator {
  getValidator(): never {
    throw new Error("agent-shell's MCP server asks no elicitation, so it validates no elicitation answer");
  }
}

/** The name the SDK server imports its default validator by (build.ts resolves it here). */
export { NoElicitationValidator as AjvJsonSchemaValidator };
