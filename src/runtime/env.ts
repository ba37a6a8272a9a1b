/** Defaults that make children non-interactive: nothing may wait on a pager or a prompt. */
const NON_INTERACTIVE: Record<string, string> = {
  GIT_TERMINAL_PROMPT: "0",
  PAGER: "cat",
  GIT_PAGER: "cat",
};

let inherited: Record<string, string> | null = null;

/** The launch environment plus the non-interactive defaults, computed once (it is on every spawn's path). */
function baseEnv(): Record<string, string> {
  if (!inherited) {
    inherited = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) inherited[k] = v;
    Object.assign(inherited, NON_INTERACTIVE);
  }
  return inherited;
}

/** The inherited environment, the non-interactive defaults, then the caller's overrides. */
export function childEnv(overrides?: Record<string, string>, extra?: Record<string, string>): Record<string, string> {
  if (!overrides && !extra) return baseEnv();
  return { ...baseEnv(), ...extra, ...overrides };
}
