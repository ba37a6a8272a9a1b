/** Variables that keep background children from waiting on a pager or a prompt; not forwarded. */
const NOT_FORWARDED = new Set(["PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT"]);

/** This shell's environment as sent with background work to the daemon (which has its own). */
export function forwardedEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !NOT_FORWARDED.has(k))) as Record<string, string>;
}
