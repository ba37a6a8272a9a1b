import { parseArgs } from "node:util";
import type { HostOptions } from "../host/tool-host.ts";
import { UsageError } from "./usage.ts";

/** Flags shared by `mcp`, `call` and the other verbs that build a ToolHost. */
export const HOST_FLAGS = {
  cwd: { type: "string" },
  allow: { type: "string", multiple: true },
  timeout: { type: "string" },
  config: { type: "string" },
  "agent-command": { type: "string" },
  "state-dir": { type: "string" },
  yes: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export type HostFlags = ReturnType<typeof parseHostFlags>["values"];

export function parseHostFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: HOST_FLAGS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function hostOptions(values: HostFlags): HostOptions {
  // Interim: the file's tables (e.g. [hosts.NAME]) until the full TOML/env loader lands.
  const config: NonNullable<HostOptions["config"]> = values.config ? readConfigFile(values.config) : {};
  if (values.timeout !== undefined) {
    const n = Number(values.timeout);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--timeout must be a whole number of seconds ≥ 1, got '${values.timeout}'`);
    config.timeout_seconds = n;
  }
  if (values.allow) config.allowed_paths = values.allow;
  if (values["state-dir"]) config.state_dir = values["state-dir"];
  return { cwd: values.cwd, config };
}

function readConfigFile(path: string): NonNullable<HostOptions["config"]> {
  try {
    return Bun.TOML.parse(require("node:fs").readFileSync(path, "utf8")) as NonNullable<HostOptions["config"]>;
  } catch (e) {
    throw new UsageError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
}
