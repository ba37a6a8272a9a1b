import { type Config, ConfigSchema } from "./schema.ts";

/**
 * Every key's default, and the keys. Imported as a Bun macro (cli/mcp-early.ts): a server
 * started with no config file, variable or config flag answers initialize from these,
 * without building the configuration's schemas first (~10–20 ms of a start).
 */
export function configDefaults(): { config: Config; keys: string[] } {
  return { config: ConfigSchema.parse({}), keys: Object.keys(ConfigSchema.shape) };
}
