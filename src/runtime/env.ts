/** Defaults that make children non-interactive: nothing may wait on a pager or a prompt. */
const NON_INTERACTIVE: Record<string, string> = {
  GIT_TERMINAL_PROMPT: "0",
  PAGER: "cat",
  GIT_PAGER: "cat",
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

/** The inherited environment, the non-interactive defaults, then the caller's overrides. */
export function childEnv(overrides?: Record<string, string>, extra?: Record<string, string>): Record<string, string> {
  if (!overrides && !extra) return baseEnv();
  return { ...baseEnv(), ...extra, ...overrides, [OWNER_MARKER]: OWNER_TOKEN };
}

/** A remote child's additions to its own (remote) environment: the defaults, then the overrides. */
export function remoteEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return { ...NON_INTERACTIVE, ...overrides };
}
