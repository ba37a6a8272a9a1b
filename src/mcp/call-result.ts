import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { isErrorResult, type ToolResult } from "../errors.ts";
import { resultJson } from "../host/result-size.ts";

/** SPEC §2 over MCP: the JSON text, the same object as structuredContent, isError exactly for the error shape. */
export function callToolResult(result: ToolResult): CallToolResult {
  return {
    content: [{ type: "text", text: resultJson(result) }],
    structuredContent: result,
    isError: isErrorResult(result),
  };
}
