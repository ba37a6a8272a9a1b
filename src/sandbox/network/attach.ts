import { mkdirSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { helperFd } from "../../runtime/spawn-helper/helper-binary.ts";
import { watchdog } from "../../runtime/watchdog.ts";
import { launcherEnv } from "../../runtime/env.ts";
import { serveProxyClient } from "./proxy.ts";
import { listeningPorts, PROXY_PORT } from "./ports.ts";
import type { NetworkRules } from "./rules.ts";

/** How often a sandbox's listening ports are looked at, to publish new ones on the host. */
const PUBLISH_EVERY_MS = 250;

/**
 * The network of one allowlist sandbox (SPEC §21): the relay (spawn helper `relay`, in the
 * sandbox's network namespace) joins its 127.0.0.1:3128 to this server's proxy and each
 * forwarded port to the host's, over unix sockets in the state dir that commands cannot reach;
 * ports its commands listen on are published on the host's loopback through the relay too.
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
  const dir = join(opts.stateRoot, "net");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const id = `${process.pid}-${opts.holdPid}`;
  const servers: Server[] = [];
  const socketPath = (what: string) => {
    const path = join(dir, `${id}.${what}`);
    if (path.length > 107) throw new Error(`agent-shell's state dir path is too long for its network sockets (${path}): set a shorter state_dir`);
    rmSync(path, { force: true });
    return path;
  };
  const listenUnix = (what: string, onConnection: (s: Socket) => void) => {
    const path = socketPath(what);
    const server = createServer({ noDelay: true } as never, onConnection);
    server.listen(path);
    servers.push(server);
    return { path, listening: new Promise<void>((done, fail) => server.once("listening", done).once("error", fail)) };
  };
  const proxy = listenUnix("proxy", (s) => serveProxyClient(s, opts.policy, opts.rules));
  const forwards = opts.rules.forward.map((port) => ({ port, ...listenUnix(`fwd${port}`, (s) => join2(s, connect({ host: "127.0.0.1", port }))) }));
  const publishPath = opts.rules.publish ? socketPath("publish") : null;
  const argv = ["/proc/self/fd/3", "relay", "--listen", `${PROXY_PORT}=${proxy.path}`, ...forwards.flatMap((f) => ["--listen", `${f.port}=${f.path}`]), ...(publishPath ? ["--publish", publishPath] : [])];
  // The namespaces follow the helper, from fd 4.
  opts.namespaces.forEach((_, i) => argv.push("--ns", String(4 + i)));
  const relay = Bun.spawn(argv, {
    stdio: ["pipe", "pipe", "inherit", helperFd(), ...opts.namespaces],
    env: launcherEnv(),
    cwd: "/",
    detached: true,
  } as never) as Bun.Subprocess<"pipe", "pipe", "inherit">;
  watchdog().track(relay.pid);
  const relayReady = new Response(relay.stdout).body!.getReader().read().then((r) => {
    if (r.done) throw new Error(`the sandbox's network relay did not start (exit ${relay.exitCode ?? relay.signalCode})`);
  });
  const published = new Map<number, Server>();
  const taken = new Set<number>();
  const publishNow = async () => {
    if (!publishPath) return;
    const listening: Promise<unknown>[] = [];
    const inside = listeningPorts(opts.holdPid);
    inside.delete(PROXY_PORT);
    for (const f of opts.rules.forward) inside.delete(f);
    for (const [port, server] of published) if (!inside.has(port)) (server.close(), published.delete(port));
    for (const port of taken) if (!inside.has(port)) taken.delete(port);
    for (const port of inside) {
      if (published.has(port) || taken.has(port)) continue;
      const server = createServer({ noDelay: true } as never, (s) => {
        const inner = connect(publishPath);
        inner.write(Buffer.from([port >> 8, port & 255]));
        join2(s, inner);
      });
      published.set(port, server);
      server.once("error", (e) => {
        published.delete(port);
        taken.add(port);
        process.stderr.write(`agent-shell: network: port ${port}, which a sandboxed command listens on, is not published on the host's loopback: ${(e as NodeJS.ErrnoException).code === "EADDRINUSE" ? "it is taken there" : e.message}\n`);
      });
      listening.push(new Promise((done) => server.once("listening", done).once("error", done)));
      server.listen(port, "127.0.0.1");
    }
    await Promise.all(listening);
  };
  const timer = publishPath ? setInterval(() => void publishNow(), PUBLISH_EVERY_MS) : null;
  timer?.unref();
  const network: SandboxNetwork = {
    ready: Promise.all([relayReady, proxy.listening, ...forwards.map((f) => f.listening)]).then(() => {}),
    publishNow,
    close() {
      if (!open.delete(network)) return;
      if (timer) clearInterval(timer);
      for (const s of [...servers, ...published.values()]) s.close();
      relay.stdin.end();
      relay.kill("SIGKILL");
      void relay.exited.then(() => watchdog().untrack(relay.pid));
      for (const s of servers) {
        const path = s.address();
        if (typeof path === "string") rmSync(path, { force: true });
      }
      if (publishPath) rmSync(publishPath, { force: true });
    },
  };
  open.add(network);
  void relay.exited.then(() => network.close());
  return network;
}

/** Joins two sockets both ways; either's end or error ends both. */
function join2(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const end = () => (a.destroy(), b.destroy());
  a.once("error", end).once("close", end);
  b.once("error", end).once("close", end);
}
