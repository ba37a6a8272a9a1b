import { parseArgvTemplate } from "../config/shell-words.ts";
import { UsageError } from "./usage.ts";
import { type OptionSpecs, parseVerbArgs } from "./verb-args.ts";

/** Flags shared by `mcp`, `call`, `config show` and the other verbs that build a ToolHost. */
export const HOST_FLAGS = {
  cwd: { type: "string" },
  allow: { type: "string", multiple: true },
  timeout: { type: "string" },
  config: { type: "string" },
  "agent-command": { type: "string" },
  "state-dir": { type: "string" },
  persist: { type: "boolean" },
  shared: { type: "boolean" },
  sandbox: { type: "string" },
  yes: { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies OptionSpecs;

export interface HostFlags {
  cwd?: string;
  allow?: string[];
  timeout?: string;
  config?: string;
  "agent-command"?: string;
  "state-dir"?: string;
  persist?: boolean;
  shared?: boolean;
  sandbox?: string;
  yes?: boolean;
  json?: boolean;
  help?: boolean;
}

/** The host flags of `verb` (and its own `extra` ones) and its positionals (words after `--` included). */
export function parseHostFlags(verb: string, argv: string[], extra: OptionSpecs = {}): { values: HostFlags; positionals: string[] } {
  const { values, positionals, command } = parseVerbArgs(verb, argv, { ...HOST_FLAGS, ...extra });
  return { values: values as HostFlags, positionals: [...positionals, ...command] };
}

/** Config keys given as flags (the highest precedence). */
export function configFlags(values: HostFlags): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  if (values.timeout !== undefined) {
    const n = Number(values.timeout);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--timeout must be a whole number of seconds ≥ 1, got '${values.timeout}'`);
    flags.timeout_seconds = n;
  }
  if (values.allow) flags.allowed_paths = values.allow;
  if (values["state-dir"]) flags.state_dir = values["state-dir"];
  if (values.sandbox !== undefined) flags.sandbox = values.sandbox;
  if (values["agent-command"] !== undefined) {
    try {
      flags.agent_command = parseArgvTemplate(values["agent-command"]);
    } catch (e) {
      throw new UsageError(`--agent-command: ${(e as Error).message}`);
    }
  }
  return flags;
}
