/**
 * Cost of the network by name (SPEC §21: a 1 GB download through the proxy at ≥ 0.9× the
 * direct throughput; a connection's set-up through it ≤ 1 ms more). Same run, alternated:
 * a server with network = "on" (direct, the host's loopback) and one with the allowlist
 * (curl → relay in the sandbox's namespace → proxy in the server → the host's server).
 * The local server sends a 1 GB file with sendfile (a sparse file: the source is not the limit).
 *   bun run build.ts && bun run bench/network.ts [connections per round]
 */
import { mkdtempSync, realpathSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { LineClient, machine, round, stats } from "./lib.ts";

const BINARY = process.env.AGENT_SHELL_BINARY ?? resolve(import.meta.dir, "../dist/agent-shell");
const CONNECTIONS = Number(process.argv[2] ?? 300);
const dir = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-net-")));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const big = join(dir, "big");
writeFileSync(big, "");
truncateSync(big, 1024 ** 3);
const source = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => (new URL(req.url).pathname === "/big" ? new Response(Bun.file(big)) : new Response("x")) });

async function server(name: string, config: string): Promise<LineClient> {
  const file = join(dir, `${name}.toml`);
  writeFileSync(file, config);
  const c = new LineClient(BINARY, ["mcp", "--state-dir", join(dir, `state-${name}`), "--config", file], dir);
  await c.initialize();
  return c;
}

const direct = await server("direct", 'network = "on"\n');
// The address is listed (an IP literal is reached only then); curl is told to use the proxy for it (NO_PROXY covers the loopback).
const proxied = await server("proxied", `network_allow = ["127.0.0.1"]\n`);
const via = { direct: "", proxied: "--noproxy '' -x http://127.0.0.1:3128" };

async function curl(c: LineClient, flags: string, command: string): Promise<string> {
  const r = (await c.call("bash", { command: command.replaceAll("CURL", `curl -sS ${flags}`), timeout_seconds: 600 })).result;
  if (r.exit_code !== 0) throw new Error(`${command}: ${JSON.stringify(r)}`);
  return r.stdout as string;
}

const url = (path: string) => `http://127.0.0.1:${source.port!}${path}`;
const speeds: Record<"direct" | "proxied", number[]> = { direct: [], proxied: [] };
for (let i = 0; i < 5; i++) {
  for (const [name, c] of [["direct", direct], ["proxied", proxied]] as const) {
    speeds[name].push(Number(await curl(c, via[name], `CURL -o /dev/null -w '%{speed_download}' ${url("/big")}`)) / 1e6);
  }
}
// Set-up: a new connection, a one-line request, the first byte of the answer, N times in one
// process (python3: no process start per connection); through the proxy the request is in
// absolute form, as a client configured with HTTP_PROXY sends it.
const probe = (port: number, proxied: boolean) =>
  `python3 -c '
import socket, time
ts = []
for i in range(${CONNECTIONS}):
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", ${proxied ? 3128 : "PORT"}))
    s.sendall(b"GET ${proxied ? "http://127.0.0.1:PORT" : ""}/small HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n")
    s.recv(1)
    ts.append((time.perf_counter() - t0) * 1000)
    s.close()
print("\\n".join("%.4f" % t for t in ts))
'`.replaceAll("PORT", String(port));
const setup: Record<"direct" | "proxied", number[]> = { direct: [], proxied: [] };
for (let i = 0; i < 2; i++) {
  for (const [name, c] of [["direct", direct], ["proxied", proxied]] as const) {
    const r = (await c.call("bash", { command: probe(source.port!, name === "proxied"), timeout_seconds: 600 })).result;
    if (r.exit_code !== 0) throw new Error(JSON.stringify(r));
    setup[name].push(...(r.stdout as string).trim().split("\n").map(Number));
  }
}
await direct.close();
await proxied.close();
source.stop(true);

const median = (xs: number[]) => stats(xs).p50;
const result = {
  machine: machine(),
  download_MB_per_s: { direct: speeds.direct.map((x) => round(x, 0)), proxied: speeds.proxied.map((x) => round(x, 0)), ratio: round(median(speeds.proxied) / median(speeds.direct), 3) },
  connection_to_first_byte_ms: {
    direct: { p50: round(median(setup.direct), 3), p99: round(stats(setup.direct).p99, 3) },
    proxied: { p50: round(median(setup.proxied), 3), p99: round(stats(setup.proxied).p99, 3) },
    added_p50: round(median(setup.proxied) - median(setup.direct), 3),
    connections: setup.direct.length,
  },
};
console.log(JSON.stringify(result, null, 2));
