/** Defaults that make children non-interactive: nothing may wait on a pager or a prompt. */
const NON_INTERACTIVE: Record<string, string> = {
  GIT_TERMINAL_PROMPT: "0",
  PAGER: "cat",
  GIT_PAGER: "cat",
};

/**
 * Variables that make test runners and package managers print less for an agent (SPEC §15),
 * each measured (README "Agent-aware children"): `bun test` prints only failures and the
 * summary with AGENT=1; Vitest (and every tool using std-env's agent detection) switches to
 * its agent reporter with AI_AGENT set; NO_COLOR drops colour codes (Vitest colours even a
 * pipe); npm leaves out its funding and update notices.
 */
export const AGENT_ENV: Readonly<Record<string, string>> = {
  AGENT: "1",
  AI_AGENT: "agent-shell",
  NO_COLOR: "1",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};

/**
 * Marks every child (and, through inheritance, everything it starts) as this process's:
 * the watchdog and the sweep of dead owners find them by it even after a `setsid`.
 */
export const OWNER_MARKER = "AGENT_SHELL_OWNER";
export const OWNER_TOKEN = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

let inherited: Record<string, string> | null = null;

/** The launch environment plus the non-interactive defaults, computed once (it is on every spawn's path). */
function baseEnv(): Record<string, string> {
  if (!inherited) {
    inherited = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) inherited[k] = v;
    Object.assign(inherited, NON_INTERACTIVE, { [OWNER_MARKER]: OWNER_TOKEN });
  }
  return inherited;
}

let withAgentEnv: Record<string, string> | null = null;

/** The inherited environment, the non-interactive defaults, then the caller's overrides. */
export function childEnv(overrides?: Record<string, string>, extra?: Record<string, string>): Record<string, string> {
  if (!overrides && !extra) return baseEnv();
  // The common case (agent variables, nothing else) is computed once: it is on every spawn's path.
  if (!overrides && extra === AGENT_ENV) return (withAgentEnv ??= { ...baseEnv(), ...AGENT_ENV });
  return { ...baseEnv(), ...extra, ...overrides, [OWNER_MARKER]: OWNER_TOKEN };
}

/** A remote child's additions to its own (remote) environment: the defaults, then the overrides. */
export function remoteEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return { ...NON_INTERACTIVE, ...overrides };
}
