import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { isErrorResult, type ToolResult } from "../errors.ts";
import { resultJson } from "../host/result-size.ts";

/** SPEC §2 over MCP: the JSON text, the same object as structuredContent, isError exactly for the error shape. */
export function callToolResult(result: ToolResult): CallToolResult {
  const shown = withoutLogPaths(result);
  return {
    content: [{ type: "text", text: resultJson(shown) }],
    structuredContent: shown,
    isError: isErrorResult(result),
  };
}

const LOG_PATHS = ["stdout_path", "stderr_path"];

/**
 * A foreground result over MCP names no log file (SPEC §15): a model's commands cannot read
 * the state dir (the sandbox hides it), so its way to the omitted output is `output_task_id`
 * (at the result's top, or in an error's context). The CLI and the library keep the paths;
 * task_output keeps them too (SPEC §14).
 */
function withoutLogPaths(result: ToolResult): ToolResult {
  const strip = (r: ToolResult): ToolResult => {
    if (!("output_task_id" in r) || !LOG_PATHS.some((k) => k in r)) return r;
    const copy = { ...r };
    for (const k of LOG_PATHS) delete copy[k];
    return copy;
  };
  const out = strip(result);
  const context = out.context;
  if (!context || typeof context !== "object") return out;
  const shown = strip(context as ToolResult);
  return shown === context ? out : { ...out, context: shown };
}
