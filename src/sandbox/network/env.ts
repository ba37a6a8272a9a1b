import { hostProxyPort } from "./host-proxy.ts";
import { PROXY_PORT } from "./ports.ts";
import type { NetworkRules } from "./rules.ts";

const NO_PROXY = "localhost,127.0.0.1,::1";

/**
 * What makes tools inside an allowlist sandbox use the proxy on `port` (SPEC §21), each
 * checked (docs/sandbox.md): curl, git, pip/urllib, wget, Bun (and Go) read the standard
 * variables (upper or lower case); npm its own; Node's fetch reads them with
 * NODE_USE_ENV_PROXY (Node ≥ 22.21); the JVM only system properties (JAVA_TOOL_OPTIONS).
 */
function proxyEnv(port: number): Record<string, string> {
  const proxy = `http://127.0.0.1:${port}`;
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    ALL_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    all_proxy: proxy,
    NO_PROXY,
    no_proxy: NO_PROXY,
    NODE_USE_ENV_PROXY: "1",
    npm_config_proxy: proxy,
    npm_config_https_proxy: proxy,
    JAVA_TOOL_OPTIONS: `-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=${port} -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=${port} -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]`,
  };
}

/** A command's `env` under `run` (an allowlist policy) with the proxy settings over it (a JAVA_TOOL_OPTIONS of its own is kept after ours). */
export function withProxyEnv(env: Record<string, string>, run: { level: string; policy: { allowlist?: NetworkRules | null } }): Record<string, string> {
  const rules = run.policy.allowlist;
  if (!rules) return env;
  // Inside a network namespace of its own the proxy is on a fixed port; at the Landlock level, on the host's loopback.
  const ours = proxyEnv(run.level === "landlock" ? hostProxyPort(run.policy, rules) : PROXY_PORT);
  const java = env.JAVA_TOOL_OPTIONS;
  return { ...env, ...ours, ...(java ? { JAVA_TOOL_OPTIONS: `${ours.JAVA_TOOL_OPTIONS} ${java}` } : {}) };
}
