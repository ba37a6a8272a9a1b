/**
 * Services for CI, against the compiled binary, same run, interleaved:
 *  - `agent-shell up` of two ready-checked services (a TCP "database" on a port, an HTTP
 *    server that depends on it, checked by URL), a test command, `agent-shell down`;
 *  - start-server-and-test (dev dependency, bench only) doing the same two servers, URL
 *    checks and test command (it kills its servers when the test ends);
 *  - `agent-shell ps` with 100 tasks in the daemon (target: median ≤ 60 ms).
 * Run: bun run build.ts && bun run bench/services.ts
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../tests/helpers/mcp.ts";
import { machine, round, stats } from "./lib.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const DB = 18431;
const WEB = 18432;
const dbCmd = `node -e 'require("net").createServer(s=>s.end("db")).listen(${DB})'`;
const webCmd = `node -e 'require("http").createServer((q,r)=>r.end("ok")).listen(${WEB})'`;

async function wall(argv: string[], env: Record<string, string>, cwd: string): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn(argv, { env, cwd, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const code = await p.exited;
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}: ${await new Response(p.stderr).text()}`);
  return ms;
}

const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-svc-")));
const cwd = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-svc-cwd-")));
const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AGENT_SHELL_")) env[k] = v;
env.AGENT_SHELL_STATE_DIR = stateDir;
writeFileSync(
  join(cwd, "agent-shell.toml"),
  `[services.db]\ncommand = '''${dbCmd}'''\nready_port = ${DB}\n[services.web]\ncommand = '''${webCmd}'''\ndepends_on = ["db"]\nready_url = "http://127.0.0.1:${WEB}/"\n`,
);
const sst = join(import.meta.dir, "..", "node_modules", ".bin", "start-server-and-test");
const test = "node -e 'fetch(\"http://127.0.0.1:" + WEB + "/\").then(r=>process.exit(r.ok?0:1))'";

try {
  await wall([BINARY, "daemon", "start"], env, cwd);
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const a = await (async () => {
      const t0 = performance.now();
      await wall([BINARY, "up"], env, cwd);
      await wall(["bash", "-c", test], env, cwd);
      await wall([BINARY, "down"], env, cwd);
      return performance.now() - t0;
    })();
    const b = await wall([sst, dbCmd, `tcp:127.0.0.1:${DB}`, webCmd, `http://127.0.0.1:${WEB}`, test], env, cwd);
    if (i >= 2) {
      ours.push(a);
      theirs.push(b);
    }
  }
  // ps with 100 tasks (sleepers), daemon warm.
  for (let i = 0; i < 100; i++) await wall([BINARY, "start", "--", "sleep 600"], env, cwd);
  const ps: number[] = [];
  for (let i = 0; i < 30; i++) ps.push(await wall([BINARY, "ps"], env, cwd));
  const s = (xs: number[]) => ({ p50: round(stats(xs).p50), min: round(stats(xs).min) });
  const result = {
    machine: machine(),
    date: new Date().toISOString(),
    "agent-shell up + test + down (2 services)": s(ours),
    "start-server-and-test (2 services + test)": s(theirs),
    "agent-shell ps (100 tasks)": s(ps),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await wall([BINARY, "daemon", "stop"], env, cwd).catch(() => {});
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(cwd, { recursive: true, force: true });
}
