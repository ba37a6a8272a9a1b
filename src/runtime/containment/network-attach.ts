import type { Socket, TCPSocketListener } from "bun";
import { closeSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { launcherEnv } from "../env.ts";
import { messageSocketPair, receiveFds } from "../kernel/fd-passing.ts";
import { helperFd } from "../spawn-helper/helper-binary.ts";
import { watchdog } from "../process-groups/watchdog.ts";
import { connectAndJoin, joinHandlers, newSide, type Side } from "../../sandbox/network/join.ts";
import { listenProxy } from "../../sandbox/network/proxy.ts";
import { listeningPorts, PROXY_PORT } from "../../sandbox/network/ports.ts";
import type { NetworkRules } from "../../sandbox/network/rules.ts";

/** How often a sandbox's listening ports are looked at, to publish new ones on the host. */
const PUBLISH_EVERY_MS = 250;

/**
 * The network of one allowlist sandbox (SPEC §21): the relay (spawn helper `relay`, in the
 * sandbox's network namespace) makes the sockets listening on its 127.0.0.1:3128 (the proxy)
 * and on each forwarded port, and hands them to this server, which accepts on them itself
 * (no hop between a command and the proxy). Ports its commands listen on are published on
 * the host's loopback through the relay, which stays for that (a unix socket in the state
 * dir, which commands cannot reach).
 */
export interface SandboxNetwork {
  /** Resolves once the relay listens inside (commands start after it). */
  ready: Promise<void>;
  /** Publishes what listens inside now (before a readiness probe). */
  publishNow(): Promise<void>;
  close(): void;
}

const open = new Set<SandboxNetwork>();

/** Publishes every allowlist sandbox's listeners now: a readiness probe on the host's loopback (ready_port) then finds them. */
export async function publishAll(): Promise<void> {
  await Promise.all([...open].map((n) => n.publishNow()));
}

export function attachNetwork(opts: { policy: object; rules: NetworkRules; namespaces: number[]; holdPid: number; stateRoot: string }): SandboxNetwork {
  const listeners: TCPSocketListener<Side>[] = [];
  const publishPath = opts.rules.publish ? socketPath(opts.stateRoot, `${process.pid}-${opts.holdPid}.publish`) : null;
  // The listeners the relay makes inside, in this order: the proxy, then each forwarded port.
  const inside = [PROXY_PORT, ...opts.rules.forward];
  const [ours, theirs] = messageSocketPair();
  const argv = ["/proc/self/fd/3", "relay", ...inside.flatMap((port) => ["--listen", String(port)]), "--give", "4", ...(publishPath ? ["--publish", publishPath] : [])];
  // The namespaces follow the helper and the socket, from fd 5.
  opts.namespaces.forEach((_, i) => argv.push("--ns", String(5 + i)));
  let relay: Bun.Subprocess<"pipe", "pipe", "inherit">;
  try {
    relay = Bun.spawn(argv, {
      stdio: ["pipe", "pipe", "inherit", helperFd(), theirs, ...opts.namespaces],
      env: launcherEnv(),
      cwd: "/",
      detached: true,
    } as never) as Bun.Subprocess<"pipe", "pipe", "inherit">;
  } catch (e) {
    closeSync(ours);
    throw e;
  } finally {
    closeSync(theirs);
  }
  watchdog().track(relay.pid);
  void relay.exited.then(() => watchdog().untrack(relay.pid));
  // Once it says so, its listening sockets wait on our end: this server accepts on them.
  const ready = new Response(relay.stdout).body!.getReader().read().then((r) => {
    const fds = r.done ? null : receiveFds(ours, inside.length);
    closeSync(ours);
    if (!fds || fds.length !== inside.length) throw new Error(`the sandbox's network relay did not start (exit ${relay.exitCode ?? relay.signalCode})`);
    fds.forEach((fd, i) => {
      const port = inside[i]!;
      listeners.push(port === PROXY_PORT ? listenProxy({ fd }, opts.policy, opts.rules) : forwardTo({ fd }, { hostname: "127.0.0.1", port }));
    });
    // Closed meanwhile (the sandbox ended before its network was up): nothing is left listening.
    if (!open.has(network)) for (const l of listeners) l.stop(true);
  });
  const published = new Map<number, TCPSocketListener<Side>>();
  const taken = new Set<number>();
  const publishNow = async () => {
    if (!publishPath || !(await ready.then(() => true, () => false))) return;
    const now = listeningPorts(opts.holdPid);
    for (const port of inside) now.delete(port);
    for (const [port, listener] of published) if (!now.has(port)) (listener.stop(true), published.delete(port));
    for (const port of taken) if (!now.has(port)) taken.delete(port);
    for (const port of now) {
      if (published.has(port) || taken.has(port)) continue;
      try {
        // Each connection names the port to the relay, which connects to it inside.
        published.set(port, forwardTo({ hostname: "127.0.0.1", port }, { unix: publishPath }, new Uint8Array([port >> 8, port & 255])));
      } catch (e) {
        taken.add(port);
        process.stderr.write(`agent-shell: network: port ${port}, which a sandboxed command listens on, is not published on the host's loopback: ${(e as NodeJS.ErrnoException).code === "EADDRINUSE" ? "it is taken there" : (e as Error).message}\n`);
      }
    }
  };
  const timer = publishPath ? setInterval(() => void publishNow(), PUBLISH_EVERY_MS) : null;
  timer?.unref();
  const network: SandboxNetwork = {
    ready,
    publishNow,
    close() {
      if (!open.delete(network)) return;
      if (timer) clearInterval(timer);
      for (const l of [...listeners, ...published.values()]) l.stop(true);
      relay.kill("SIGKILL");
      if (publishPath) rmSync(publishPath, { force: true });
    },
  };
  open.add(network);
  return network;
}

/** A unix socket path in the state dir's `net/` (hidden from commands), free to bind. */
function socketPath(stateRoot: string, name: string): string {
  const dir = join(stateRoot, "net");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, name);
  if (path.length > 107) throw new Error(`agent-shell's state dir path is too long for its network sockets (${path}): set a shorter state_dir`);
  rmSync(path, { force: true });
  return path;
}

/** Listens on `where`; each connection is joined to a new one to `target` (which is told `hello` first). */
function forwardTo(where: { fd: number } | { hostname: string; port: number }, target: { hostname: string; port: number } | { unix: string }, hello?: Uint8Array): TCPSocketListener<Side> {
  return Bun.listen<Side>({
    ...where,
    socket: {
      ...joinHandlers,
      open(client: Socket<Side>) {
        client.data = newSide();
        void connectAndJoin(client, target, hello ? [hello] : []).then((r) => {
          if (r instanceof Error) client.end();
        });
      },
    },
  } as never);
}
