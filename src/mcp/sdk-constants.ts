import { LATEST_PROTOCOL_VERSION, RELATED_TASK_META_KEY, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";

/**
 * Constants of the SDK agent-shell is built with. Imported as a Bun macro (server-identity.ts,
 * json-rpc-shape.ts): the values are written into the binary, so that reading and answering
 * the first message loads none of the SDK (its types module alone is ~45 ms of a start).
 */
export function sdkConstants(): { supported: string[]; latest: string; relatedTaskMetaKey: string } {
  return { supported: [...SUPPORTED_PROTOCOL_VERSIONS], latest: LATEST_PROTOCOL_VERSION, relatedTaskMetaKey: RELATED_TASK_META_KEY };
}
