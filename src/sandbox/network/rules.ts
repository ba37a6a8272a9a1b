/**
 * The names a sandboxed command may reach (SPEC §21), as the config gives them: `host`,
 * `*.domain` (any name under it, not the domain itself), either with an optional `:port`.
 * Built once per server from config; the proxy's decision (decide.ts) reads nothing else.
 */
export interface NameEntry {
  /** Lower case, no trailing dot; for a wildcard, the domain after `*.`. */
  host: string;
  wildcard: boolean;
  /** Absent: any port. */
  port?: number;
  /** As written in the config (for messages and `config show`). */
  text: string;
}

export interface NetworkRules {
  /** config network_allow: may reach loopback and private addresses (a person listed them). */
  allow: NameEntry[];
  /** The built-in registries and code hosts (unless network_allow_defaults = false): never a private address. */
  defaults: NameEntry[];
  /** config network_deny: wins over everything, a person's yes included. */
  deny: NameEntry[];
  /** config network_forward: host loopback ports reachable inside on the same port. */
  forward: number[];
  /** Ports a command listens on are published on the host's loopback (config network_publish). */
  publish: boolean;
}

/** Package registries and code hosts a build needs (SPEC §21). */
export const DEFAULT_ALLOW: readonly string[] = [
  "registry.npmjs.org",
  "registry.yarnpkg.com",
  "pypi.org",
  "files.pythonhosted.org",
  "crates.io",
  "static.crates.io",
  "index.crates.io",
  "proxy.golang.org",
  "sum.golang.org",
  "repo1.maven.org",
  "repo.maven.apache.org",
  "rubygems.org",
  "index.rubygems.org",
  "github.com",
  "*.githubusercontent.com",
  "codeload.github.com",
  "api.github.com",
  "gitlab.com",
  "bitbucket.org",
  "deb.debian.org",
  "security.debian.org",
  "archive.ubuntu.com",
  "security.ubuntu.com",
];

/** What a `task` subagent's CLI talks to (its model's API and sign-in), allowed in its sandbox only. */
export const AGENT_API_HOSTS: readonly string[] = ["api.anthropic.com", "statsig.anthropic.com", "api.openai.com", "chatgpt.com", "auth.openai.com", "generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"];

const LABEL = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/;

/** One config entry, or why it is not one (the config schema reports it). */
export function parseEntry(text: string): NameEntry | { error: string } {
  let rest = text.trim().toLowerCase();
  let port: number | undefined;
  // `[::1]:5432`, `host:443`; a bare IPv6 literal has several colons and no port.
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(rest);
  if (bracketed) {
    rest = bracketed[1]!;
    if (bracketed[2]) port = Number(bracketed[2]);
  } else if ((rest.match(/:/g) ?? []).length === 1) {
    const at = rest.lastIndexOf(":");
    if (!/^\d+$/.test(rest.slice(at + 1))) return { error: `'${text}': the port after ':' must be a number` };
    port = Number(rest.slice(at + 1));
    rest = rest.slice(0, at);
  }
  if (port !== undefined && !(port >= 1 && port <= 65535)) return { error: `'${text}': the port must be 1-65535` };
  rest = rest.replace(/\.$/, "");
  const wildcard = rest.startsWith("*.");
  if (wildcard) rest = rest.slice(2);
  const ip = isIpLiteral(rest);
  if (wildcard && ip) return { error: `'${text}': a wildcard applies to names, not addresses` };
  if (!ip && !rest.split(".").every((label) => LABEL.test(label))) {
    return { error: `'${text}': give a host name ('example.com'), a wildcard ('*.example.com') or an IP address, optionally with ':port'` };
  }
  return { host: rest, wildcard, ...(port !== undefined ? { port } : {}), text };
}

export function parseEntries(list: readonly string[]): NameEntry[] {
  return list.map((text) => {
    const e = parseEntry(text);
    if ("error" in e) throw new Error(e.error);
    return e;
  });
}

export function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || (host.includes(":") && /^[0-9a-f:.]+$/.test(host));
}

/** Whether `entry` covers `host` (normalised) on `port`. */
export function covers(entry: NameEntry, host: string, port: number): boolean {
  if (entry.port !== undefined && entry.port !== port) return false;
  return entry.wildcard ? host.endsWith(`.${entry.host}`) : host === entry.host;
}

/** The rules a config means. */
export function networkRules(config: { network_allow: string[]; network_allow_defaults: boolean; network_deny: string[]; network_forward: number[]; network_publish: boolean }): NetworkRules {
  return {
    allow: parseEntries(config.network_allow),
    defaults: config.network_allow_defaults ? parseEntries(DEFAULT_ALLOW) : [],
    deny: parseEntries(config.network_deny),
    forward: [...new Set(config.network_forward)].sort((a, b) => a - b),
    publish: config.network_publish,
  };
}
