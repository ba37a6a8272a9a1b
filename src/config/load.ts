import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { type Config, ConfigSchema } from "./schema.ts";
import { parseArgvTemplate } from "./shell-words.ts";
import { defaultConfigFile, envName } from "./config-file.ts";

export type ConfigSource = "default" | `file:${string}` | `env:${string}` | "flag";

/** A configuration problem: names the key and where it came from. Faces exit with code 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface ConfigInputs {
  /** `--config FILE`; else `$XDG_CONFIG_HOME/agent-shell/config.toml` if it exists. */
  configFile?: string;
  /** Values given as flags or library options (highest precedence), snake_case keys. */
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
}

export interface LoadedConfig {
  config: Config;
  sources: Record<keyof Config, ConfigSource>;
  file: string | null;
}

const KEYS = Object.keys(ConfigSchema.shape) as Array<keyof Config>;
/** Keys that cannot come from an environment variable (tables). */
const FILE_ONLY = new Set<keyof Config>(["hosts", "rules"]);

/** Defaults < file < env `AGENT_SHELL_*` < flags; every value validated, errors name the key and source. */
export function loadConfig(inputs: ConfigInputs = {}): LoadedConfig {
  const env = inputs.env ?? process.env;
  const merged: Record<string, unknown> = {};
  const sources = Object.fromEntries(KEYS.map((k) => [k, "default"])) as Record<keyof Config, ConfigSource>;

  const file = inputs.configFile ?? defaultConfigFile(env);
  const fileUsed = inputs.configFile !== undefined || existsSync(file) ? file : null;
  if (fileUsed) {
    for (const [key, value] of Object.entries(readConfigFile(fileUsed))) {
      checkValue(key, value, `in ${fileUsed}`);
      merged[key] = value;
      sources[key as keyof Config] = `file:${fileUsed}`;
    }
  }
  for (const key of KEYS) {
    const name = envName(key);
    const raw = env[name];
    if (raw === undefined || raw === "" || FILE_ONLY.has(key)) continue;
    const value = fromEnvString(key, raw, name);
    checkValue(key, value, `from environment variable ${name}`);
    merged[key] = value;
    sources[key] = `env:${name}`;
  }
  for (const [key, value] of Object.entries(inputs.flags ?? {})) {
    if (value === undefined) continue;
    checkValue(key, value, "given as a flag or option");
    merged[key] = value;
    sources[key as keyof Config] = "flag";
  }
  const config = ConfigSchema.parse(merged);
  loaded.add(config);
  return { config, sources, file: fileUsed };
}

/** Configs loadConfig made: already validated, with every default in place. */
const loaded = new WeakSet<object>();

/** Whether `config` is one loadConfig returned (a ToolHost then uses it as it is, without parsing it again). */
export function isLoadedConfig(config: unknown): config is Config {
  return typeof config === "object" && config !== null && loaded.has(config);
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
  try {
    return Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (e) {
    const message = (e as Error).message.replace(/^TOML Parse error:\s*/, "");
    throw new ConfigError(`invalid TOML in ${path} at line ${errorLine(text, (e as Error).message)}: ${message}`);
  }
}

/** Bun's TOML errors carry no usable position: find the first line whose prefix fails the same way. */
function errorLine(text: string, message: string): number {
  const lines = text.split("\n");
  for (let k = 1; k <= lines.length; k++) {
    try {
      Bun.TOML.parse(lines.slice(0, k).join("\n"));
    } catch (e) {
      if ((e as Error).message === message) return k;
    }
  }
  return lines.length;
}

function checkValue(key: string, value: unknown, where: string): void {
  const shape = ConfigSchema.shape as Record<string, z.ZodType>;
  const schema = shape[key];
  if (!schema) {
    throw new ConfigError(`unknown configuration key '${key}' ${where}. Known keys: ${KEYS.join(", ")}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = [key, ...issue.path.map(String)].join(".");
    throw new ConfigError(`invalid value for '${path}' ${where}: ${issue.message}`);
  }
}

/** Environment values are strings: numbers, `:`-separated path lists, comma-separated names and ports, argv templates. */
function fromEnvString(key: keyof Config, raw: string, name: string): unknown {
  const inner = (ConfigSchema.shape[key] as z.ZodType).def as { type: string; innerType?: z.ZodType };
  const type = inner.type === "default" || inner.type === "optional" ? (inner.innerType!.def as { type: string }).type : inner.type;
  if (type === "number") {
    const n = Number(raw);
    if (raw.trim() === "" || Number.isNaN(n)) throw new ConfigError(`invalid value for '${key}' from environment variable ${name}: expected a number, got '${raw}'`);
    return n;
  }
  if (type === "boolean") {
    if (raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    throw new ConfigError(`invalid value for '${key}' from environment variable ${name}: expected true or false, got '${raw}'`);
  }
  if (key === "agent_command") {
    try {
      return parseArgvTemplate(raw);
    } catch (e) {
      throw new ConfigError(`invalid value for '${key}' from environment variable ${name}: ${(e as Error).message}`);
    }
  }
  // Names may carry a ':port': comma-separated, as ports are.
  if (key === "network_allow" || key === "network_deny") return raw.split(",").map((s) => s.trim()).filter(Boolean);
  if (key === "network_forward") return raw.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  if (type === "array") return raw.split(":").filter(Boolean);
  return raw;
}
