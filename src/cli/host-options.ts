import { loadConfig } from "../config/load.ts";
import type { HostOptions } from "../host/tool-host.ts";
import { configFlags, type HostFlags } from "./host-flags.ts";

/** HostOptions from the flags, the environment and the config file (ConfigError on bad config). */
export function hostOptions(values: HostFlags): HostOptions {
  const { config } = loadConfig({ configFile: values.config, flags: configFlags(values) });
  return { cwd: values.cwd, config, persist: values.persist === true };
}
