/** Defaults that make children non-interactive: nothing may wait on a pager or a prompt. */
const NON_INTERACTIVE: Record<string, string> = {
  GIT_TERMINAL_PROMPT: "0",
  PAGER: "cat",
  GIT_PAGER: "cat",
};

/** The inherited environment, the non-interactive defaults, then the caller's overrides. */
export function childEnv(overrides: Record<string, string> = {}, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return Object.assign(env, NON_INTERACTIVE, extra, overrides);
}

/** A remote child's additions to its own (remote) environment: the defaults, then the overrides. */
export function remoteEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return { ...NON_INTERACTIVE, ...overrides };
}
