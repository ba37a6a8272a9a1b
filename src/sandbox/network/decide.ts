import { covers, isIpLiteral, type NetworkRules } from "./rules.ts";

/**
 * The proxy's decision for one connection (SPEC §21), pure: the name and port asked for,
 * the rules, and what people allowed during this server's life. `ask`: nobody decided yet.
 * `allow` carries whether the name may reach a loopback or private address (checkAddress).
 */
export type Decision =
  | { verdict: "allow"; privateOk: boolean; why: string }
  | { verdict: "deny"; reason: string }
  | { verdict: "ask" };

export function normalizeHost(host: string): string {
  const h = host.trim().toLowerCase().replace(/\.$/, "");
  return h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h;
}

export function decide(rawHost: string, port: number, rules: NetworkRules, allowedForLife: ReadonlySet<string> = new Set()): Decision {
  const host = normalizeHost(rawHost);
  if (!host || !(port >= 1 && port <= 65535)) return { verdict: "deny", reason: "not a valid host and port" };
  const denied = rules.deny.find((e) => covers(e, host, port));
  if (denied) return { verdict: "deny", reason: `network_deny lists '${denied.text}'` };
  const listed = rules.allow.find((e) => covers(e, host, port));
  if (listed) return { verdict: "allow", privateOk: true, why: `network_allow lists '${listed.text}'` };
  if (isIpLiteral(host)) return { verdict: "deny", reason: "an IP address is reached only when network_allow lists it" };
  if (allowedForLife.has(answerKey(host, port))) return { verdict: "allow", privateOk: true, why: "a person allowed it for this server's life" };
  const builtIn = rules.defaults.find((e) => covers(e, host, port));
  if (builtIn) return { verdict: "allow", privateOk: false, why: `built-in list ('${builtIn.text}')` };
  return { verdict: "ask" };
}

/** What a person's "for the server's life" answer is kept under. */
export function answerKey(host: string, port: number): string {
  return `${normalizeHost(host)}:${port}`;
}

/**
 * Whether an address a name resolved to may be connected to: a loopback, private, link-local
 * (the cloud metadata address included), unspecified or shared address only when the name was
 * allowed by a person (listed, or answered); the address checked is the one connected to.
 */
export function checkAddress(address: string, privateOk: boolean): string | null {
  if (privateOk || !isInternal(address)) return null;
  return `it resolves to ${address}, a loopback, private or link-local address, reached only when network_allow lists the name`;
}

export function isInternal(address: string): boolean {
  const a = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) return isInternal(mapped[1]!);
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (v4) {
    const [x, y] = [Number(v4[1]), Number(v4[2])];
    return x === 0 || x === 10 || x === 127 || (x === 169 && y === 254) || (x === 172 && y >= 16 && y <= 31) || (x === 192 && y === 168) || (x === 100 && y >= 64 && y <= 127) || x >= 224;
  }
  if (a === "::" || a === "::1") return true;
  return /^f[cd]/.test(a) || /^fe[89ab]/.test(a) || /^ff/.test(a);
}
