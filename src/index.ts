/**
 * Library face: the same tools in-process, without MCP.
 *
 *   import { createToolHost } from "agent-shell";
 *   const host = createToolHost({ cwd: "/repo" });
 *   const result = await host.call("bash", { command: "npm test" });
 *   await host.close();
 */
import { loadConfig } from "./config/load.ts";
import type { Config } from "./config/schema.ts";
import { ToolHost } from "./host/tool-host.ts";
import type { ToolInfo } from "./host/tool-list.ts";
import type { ToolResult } from "./errors.ts";

export type { Config } from "./config/schema.ts";
export type { ToolInfo } from "./host/tool-list.ts";
export type { ToolResult, ErrorResult, ErrorCode } from "./errors.ts";
export { ConfigError } from "./config/load.ts";

export type ToolHostOptions = {
  /** Working directory of the tools. (default: process.cwd()) */
  cwd?: string;
  /** Extra allowed roots for working_directory (the cwd is always allowed). */
  allowedPaths?: string[];
  /** A TOML config file (else `$XDG_CONFIG_HOME/agent-shell/config.toml` when it exists). */
  configFile?: string;
  /** Keep the registry in a fixed owner folder (the state dir) and recover its tasks. */
  persist?: boolean;
} & Partial<Config>;

export interface AgentShellHost {
  tools: ToolInfo[];
  call(name: string, args?: unknown, options?: { signal?: AbortSignal }): Promise<ToolResult>;
  close(): Promise<void>;
}

/** Creates the tools with the given options (same precedence as flags over env over file). */
export function createToolHost(options: ToolHostOptions = {}): AgentShellHost {
  const { cwd, allowedPaths, configFile, persist, ...keys } = options;
  const flags: Record<string, unknown> = { ...keys };
  if (allowedPaths) flags.allowed_paths = allowedPaths;
  const { config } = loadConfig({ configFile, flags });
  const host = new ToolHost({ cwd, config, persist });
  return {
    tools: host.tools,
    call: (name, args = {}, callOptions = {}) => host.call(name, args, callOptions),
    close: () => host.close(),
  };
}
