import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { VERSION } from "../version.ts";
import { sdkConstants } from "./sdk-constants.ts" with { type: "macro" };

/** Who the server is and what it can do: the same for the SDK server (server.ts) and the early answer. */
export const SERVER_INFO = { name: "agent-shell", version: VERSION };
export const SERVER_CAPABILITIES = { tools: {}, logging: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } };

const VERSIONS = sdkConstants();

/**
 * The answer to a well-formed `initialize` request, as the SDK server gives it (the version
 * the client asked for when supported, else the latest); null for anything else, which is
 * left to the SDK server. The transport compares the two (stdio-transport.ts).
 */
export function initializeAnswer(message: JSONRPCMessage, instructions: string): JSONRPCMessage | null {
  if (!("method" in message) || message.method !== "initialize" || !("id" in message)) return null;
  const params = message.params as Record<string, unknown> | undefined;
  const client = params?.clientInfo as Record<string, unknown> | undefined;
  const wellFormed =
    typeof params?.protocolVersion === "string" &&
    typeof params.capabilities === "object" &&
    params.capabilities !== null &&
    typeof client?.name === "string" &&
    typeof client.version === "string";
  if (!wellFormed) return null;
  const asked = params.protocolVersion as string;
  const protocolVersion = VERSIONS.supported.includes(asked) ? asked : VERSIONS.latest;
  return { jsonrpc: "2.0", id: message.id, result: { protocolVersion, capabilities: SERVER_CAPABILITIES, serverInfo: SERVER_INFO, instructions } } as JSONRPCMessage;
}
