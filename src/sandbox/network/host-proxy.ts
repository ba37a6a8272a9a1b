import type { TCPSocketListener } from "bun";
import { listenProxy } from "./proxy.ts";
import type { NetworkRules } from "./rules.ts";

/**
 * At the Landlock level there is no network namespace: the proxy listens on the host's
 * loopback (a port of its own per policy), and the policy's Landlock ruleset lets commands
 * connect over TCP to that port and the forwarded ones only (landlock/ruleset.ts).
 */
const listeners = new WeakMap<object, TCPSocketListener<unknown>>();

export function hostProxyPort(policy: object, rules: NetworkRules): number {
  let listener = listeners.get(policy);
  if (!listener) {
    listener = listenProxy({ hostname: "127.0.0.1", port: 0 }, policy, rules) as TCPSocketListener<unknown>;
    listener.unref();
    listeners.set(policy, listener);
  }
  return listener.port;
}
