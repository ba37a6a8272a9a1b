import { readFileSync } from "node:fs";

/** The port the proxy listens on inside every allowlist sandbox's own loopback (HTTP and SOCKS5 on one port). */
export const PROXY_PORT = 3128;

/**
 * The TCP ports listening on a loopback or any address in the network namespace of `pid`
 * (its /proc/<pid>/net/tcp and tcp6): what a sandbox's commands serve.
 */
export function listeningPorts(pid: number): Set<number> {
  const ports = new Set<number>();
  for (const file of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${file}`, "latin1");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is HEXADDR:HEXPORT; state 0A is LISTEN.
      if (f[3] !== "0A" || !f[1]) continue;
      ports.add(parseInt(f[1].slice(f[1].indexOf(":") + 1), 16));
    }
  }
  return ports;
}
