import { homedir } from "node:os";
import { join } from "node:path";

/** `$XDG_CONFIG_HOME/agent-shell/config.toml` (else under ~/.config): read when it exists. */
export function defaultConfigFile(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "agent-shell", "config.toml");
}

/** The environment variable of a config key: `AGENT_SHELL_<KEY>`. */
export function envName(key: string): string {
  return `AGENT_SHELL_${key.toUpperCase()}`;
}
