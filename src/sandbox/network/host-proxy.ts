import { createServer, type Server } from "node:net";
import { serveProxyClient } from "./proxy.ts";
import type { NetworkRules } from "./rules.ts";

/**
 * At the Landlock level there is no network namespace: the proxy listens on the host's
 * loopback (a port of its own per policy), and the policy's Landlock ruleset lets commands
 * connect over TCP to that port and the forwarded ones only (landlock/ruleset.ts).
 */
const servers = new WeakMap<object, { server: Server; port: number }>();

export function hostProxyPort(policy: object, rules: NetworkRules): number {
  let known = servers.get(policy);
  if (!known) {
    const server = createServer({ noDelay: true } as never, (s) => serveProxyClient(s, policy, rules));
    // Bun binds at once: the port is known now, before any command that needs it starts.
    server.listen(0, "127.0.0.1");
    server.unref();
    known = { server, port: (server.address() as { port: number }).port };
    servers.set(policy, known);
  }
  return known.port;
}
