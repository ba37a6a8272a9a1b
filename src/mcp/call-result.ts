import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { isErrorResult, type ToolResult } from "../errors.ts";
import { resultJson } from "../host/result-size.ts";

/** Who reads a connection's results. */
export interface ResultFace {
  /**
   * Whether foreground results name the log files (`stdout_path`/`stderr_path`): a person's
   * CLI reads them; a model's commands cannot (the sandbox hides the state dir), so for a
   * model the way in is `output_task_id` (SPEC §15).
   */
  logPaths: boolean;
}

/** A model's client: no log paths. */
export const MODEL_FACE: ResultFace = { logPaths: false };

/** SPEC §2 over MCP: the JSON text, the same object as structuredContent, isError exactly for the error shape. */
export function callToolResult(result: ToolResult, face: ResultFace = MODEL_FACE): CallToolResult {
  const shown = face.logPaths ? result : withoutLogPaths(result);
  return {
    content: [{ type: "text", text: resultJson(shown) }],
    structuredContent: shown,
    isError: isErrorResult(result),
  };
}

const LOG_PATHS = ["stdout_path", "stderr_path"];

/**
 * A foreground result without log paths: `output_task_id` is its way to the omitted output
 * (at its top, or in an error's context). task_output keeps them (SPEC §14).
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
