/** Defaults that make children non-interactive: nothing may wait on a pager or a prompt. */
const NON_INTERACTIVE: Record<string, string> = {
  GIT_TERMINAL_PROMPT: "0",
  PAGER: "cat",
  GIT_PAGER: "cat",
};

/**
 * Variables that make test runners and package managers print less for an agent (SPEC §15),
 * each measured (docs/output.md, "Agent-aware children"): `bun test` prints only failures and the
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

/**
 * The server's own secrets are not handed down (SPEC §20): a variable whose name says it
 * holds one is left out of what children inherit, unless `env_passthrough` names it or the
 * call's `env` gives it (as Codex's shell environment policy does).
 */
const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** The secret-named variables of an environment (what a person's own `run` passes on explicitly). */
export function secretVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && isSecretName(k)) out[k] = v;
  return out;
}

/**
 * Variables that change how a program loads or starts (the dynamic loader, glibc, Bun,
 * Node). A launcher or wrapper that runs before the sandbox is in force never gets them:
 * only the command does (SPEC §20).
 */
const LOADER_NAME = /^(LD_|GCONV_PATH$|GLIBC_TUNABLES$|MALLOC_|LOCPATH$|NLSPATH$|HOSTALIASES$|RES_OPTIONS$|BUN_|NODE_OPTIONS$|NODE_PATH$|BASH_ENV$|ENV$|SHELLOPTS$|BASHOPTS$|PS4$)/;

export function isLoaderName(name: string): boolean {
  return LOADER_NAME.test(name);
}

/** The server's own environment, as the key of the bases made without a shell snapshot. */
const SERVER_ONLY: Record<string, string> = {};
const inherited = new WeakMap<Record<string, string>, Map<string, Record<string, string>>>();
const withAgentEnv = new WeakMap<Record<string, string>, Record<string, string>>();

/**
 * The user's shell's exported variables (SPEC §23), then the launch environment where they
 * lack a name, less secrets, plus the non-interactive defaults: computed once per snapshot
 * and passthrough list (it is on every spawn's path).
 */
function baseEnv(passthrough: readonly string[], shellEnv: Record<string, string> = SERVER_ONLY): Record<string, string> {
  const key = passthrough.join("\0");
  let byPassthrough = inherited.get(shellEnv);
  if (!byPassthrough) inherited.set(shellEnv, (byPassthrough = new Map()));
  let env = byPassthrough.get(key);
  if (!env) {
    const keep = new Set(passthrough);
    env = {};
    for (const source of [process.env, shellEnv]) {
      for (const [k, v] of Object.entries(source)) if (v !== undefined && (!isSecretName(k) || keep.has(k))) env[k] = v;
    }
    Object.assign(env, NON_INTERACTIVE, { [OWNER_MARKER]: OWNER_TOKEN });
    byPassthrough.set(key, env);
  }
  return env;
}

/** What a child inherits before a call's own `env`: `passthrough` names secrets kept anyway. */
export interface InheritOptions {
  passthrough?: readonly string[];
  /** Added before the call's overrides (e.g. TERM for a terminal, the agent-aware defaults). */
  extra?: Record<string, string>;
  /** The exported variables of the user's login shell (shell-snapshot.ts): they come before the server's own. */
  shellEnv?: Record<string, string>;
}

/** The inherited environment (secrets left out), the non-interactive defaults, then the caller's overrides. */
export function childEnv(overrides?: Record<string, string>, options: InheritOptions = {}): Record<string, string> {
  const base = baseEnv(options.passthrough ?? [], options.shellEnv);
  if (!overrides && !options.extra) return base;
  // The common case (the agent variables, nothing else) is merged once: it is on every spawn's path.
  if (!overrides && options.extra === AGENT_ENV) {
    let merged = withAgentEnv.get(base);
    if (!merged) withAgentEnv.set(base, (merged = { ...base, ...AGENT_ENV }));
    return merged;
  }
  return { ...base, ...options.extra, ...overrides, [OWNER_MARKER]: OWNER_TOKEN };
}

/**
 * The environment of a launcher that runs before the sandbox is in force (bwrap, the
 * spawn helper and spawners): the server's own inherited environment with
 * nothing that changes how a program loads. The command's environment reaches it another way.
 */
export function launcherEnv(): Record<string, string> {
  launcher ??= Object.fromEntries(Object.entries(baseEnv([])).filter(([k]) => !isLoaderName(k)));
  return launcher;
}
let launcher: Record<string, string> | null = null;

/** A remote child's additions to its own (remote) environment: the defaults, then the overrides. */
export function remoteEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return { ...NON_INTERACTIVE, ...overrides };
}
