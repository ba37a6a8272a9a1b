import { PROXY_PORT } from "./ports.ts";

const PROXY = `http://127.0.0.1:${PROXY_PORT}`;
const NO_PROXY = "localhost,127.0.0.1,::1";

/**
 * What makes tools inside an allowlist sandbox use the proxy (SPEC §21), each checked
 * (docs/sandbox.md): curl, git, pip/urllib, npm, Go and Bun read the standard variables
 * (upper or lower case); Node's own fetch reads them with NODE_USE_ENV_PROXY; the JVM reads
 * none of them, only system properties (JAVA_TOOL_OPTIONS).
 */
export const PROXY_ENV: Readonly<Record<string, string>> = {
  HTTP_PROXY: PROXY,
  HTTPS_PROXY: PROXY,
  ALL_PROXY: PROXY,
  http_proxy: PROXY,
  https_proxy: PROXY,
  all_proxy: PROXY,
  NO_PROXY,
  no_proxy: NO_PROXY,
  NODE_USE_ENV_PROXY: "1",
  npm_config_proxy: PROXY,
  npm_config_https_proxy: PROXY,
  JAVA_TOOL_OPTIONS: `-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=${PROXY_PORT} -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=${PROXY_PORT} -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]`,
};

/** `env` with the proxy settings over it (a JAVA_TOOL_OPTIONS of its own is kept after ours). */
export function withProxyEnv(env: Record<string, string>): Record<string, string> {
  const java = env.JAVA_TOOL_OPTIONS;
  return { ...env, ...PROXY_ENV, ...(java ? { JAVA_TOOL_OPTIONS: `${PROXY_ENV.JAVA_TOOL_OPTIONS} ${java}` } : {}) };
}
