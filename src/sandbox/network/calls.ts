/**
 * The commands running under an allowlist policy, for the proxy: whom to ask about a name
 * nobody allowed yet (the call's person, when its client can elicit) and where a refusal is
 * reported (the call's `network_denied`). A connection cannot be told apart by command, so a
 * refusal is reported to every command of the policy that was running when it happened.
 */
export interface NetworkDenied {
  host: string;
  port: number;
  reason: string;
}

export type NetworkAnswer = "once" | "always" | "no";

export interface NetworkQuestion {
  host: string;
  port: number;
  /** The command(s) running in the sandbox when the connection was asked for. */
  commands: string[];
  /** Set when the name resolves to a loopback, private or link-local address: the person is told. */
  internal?: string;
}

export interface NetworkCall {
  command: string;
  /** The call's person (SPEC §19); absent: nobody can be asked, the name is refused at once. */
  ask?: (question: NetworkQuestion) => Promise<NetworkAnswer>;
  /** Filled as connections are refused; the result's `network_denied`. */
  denied: NetworkDenied[];
}

const running = new Map<object, Set<NetworkCall>>();

/** `call` runs under `policy` until the returned function is called. */
export function enterCall(policy: object, call: NetworkCall): () => void {
  let calls = running.get(policy);
  if (!calls) running.set(policy, (calls = new Set()));
  calls.add(call);
  return () => {
    calls.delete(call);
    if (calls.size === 0 && running.get(policy) === calls) running.delete(policy);
  };
}

export function callsUnder(policy: object): NetworkCall[] {
  return [...(running.get(policy) ?? [])];
}

/** Most denials a result lists (a loop retrying would otherwise grow it without end). */
const MAX_DENIED = 20;

export function reportDenied(calls: NetworkCall[], denied: NetworkDenied): void {
  for (const c of calls) {
    if (c.denied.length >= MAX_DENIED || c.denied.some((d) => d.host === denied.host && d.port === denied.port)) continue;
    c.denied.push(denied);
  }
}
