/**
 * As the work grows (SPEC §18), one run, one table:
 *  - 1,000 background tasks started in one burst: none lost, server RSS, task_list time and
 *    size, then `kill_shell` of all of them at once;
 *  - 20 clients at once making foreground `true` calls, over `--shared` (20 stdio processes,
 *    one daemon) and over HTTP sessions (one server): calls per second against one client
 *    alone through the same face, errors, slowest call;
 *  - cold start: spawn → `initialize` answered, against the binary's own `--version`.
 * Run: bun run build.ts && bun run bench/scale.ts   (BENCH_TASKS, BENCH_CLIENTS, BENCH_SECONDS;
 * BENCH_ONLY=tasks|clients|cold for one section)
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, startServer, type McpSession } from "../tests/helpers/mcp.ts";
import { startHttpServer } from "../tests/helpers/http-mcp.ts";
import { processesMatching } from "../tests/helpers/procs.ts";

const TASKS = Number(process.env.BENCH_TASKS ?? 1000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const COLD_STARTS = 20;
const ONLY = process.env.BENCH_ONLY;
const runs = (section: string) => ONLY === undefined || ONLY === section;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: string[][] = [];
const row = (what: string, measured: string, goal: string, ok?: boolean) => rows.push([what, measured, goal, ok === undefined ? "" : ok ? "✅" : "❌"]);
const rssMb = (pid: number, field = "VmRSS") => Number(readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${field}:\\s+(\\d+)`))![1]) / 1024;

// ---------- 1,000 tasks ----------
if (runs("tasks")) {
  const s = await startServer();
  const marker = `600.${process.pid}`;
  try {
    let t0 = performance.now();
    const started = await Promise.all(Array.from({ length: TASKS }, () => s.call("bash", { command: `sleep ${marker}`, run_in_background: true }, { timeout: 600_000 })));
    const startMs = performance.now() - t0;
    const ids = started.map((r) => r.task_id as string);
    const lost = TASKS - new Set(ids.filter((id) => typeof id === "string")).size;
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 30; i++) {
      t0 = performance.now();
      const r = await s.callRaw("task_list", {});
      times.push(performance.now() - t0);
      bytes = Buffer.byteLength(r.content[0].text);
    }
    const rss = rssMb(s.pid);
    t0 = performance.now();
    const kills = await Promise.all(ids.map((task_id) => s.call("kill_shell", { task_id }, { timeout: 600_000 })));
    const killMs = performance.now() - t0;
    const killed = kills.filter((k) => k.status === "killed").length;
    const left = processesMatching(`sleep ${marker}`).length;
    row(`${TASKS} background tasks started in one burst`, `${startMs.toFixed(0)} ms, ${lost} lost`, "none lost", lost === 0);
    row(`server RSS with ${TASKS} running`, `${rss.toFixed(0)} MiB (peak ${rssMb(s.pid, "VmHWM").toFixed(0)} after the kills)`, "≤ 150 MiB", rss <= 150);
    row(`task_list with ${TASKS} running (median)`, `${median(times).toFixed(1)} ms, ${bytes} bytes`, "≤ 10 ms, ≤ 8,000 bytes", median(times) <= 10 && bytes <= 8000);
    const floor = await killFloor();
    row(
      `kill_shell of all ${TASKS} at once`,
      `${killMs.toFixed(0)} ms, ${killed} killed, ${left} left; floor ${floor.toFixed(0)} ms (${(killMs / floor).toFixed(1)}×)`,
      "≤ 2,000 ms, none left",
      killMs <= 2000 && left === 0,
    );
  } finally {
    await s.close();
  }
}

/** The floor of a kill of all: as many uncontained sleeps, each leading its group; SIGTERM to each, until every exit is seen (no MCP, sandbox or cgroup). */
async function killFloor(): Promise<number> {
  const procs = Array.from({ length: TASKS }, () => Bun.spawn(["sleep", `601.${process.pid}`], { stdio: ["ignore", "ignore", "ignore"], detached: true }));
  await Bun.sleep(500);
  const t0 = performance.now();
  await Promise.all(
    procs.map((p) => {
      process.kill(-p.pid, "SIGTERM");
      return p.exited;
    }),
  );
  return performance.now() - t0;
}

// ---------- 20 clients ----------
/** What a client of either face does here. */
type Caller = Pick<McpSession, "call" | "close">;

/** Calls `bash true` for SECONDS from each client at once: calls per second together, errors, slowest. */
async function hammer(clients: Caller[]): Promise<{ perSecond: number; errors: number; slowest: number }> {
  let calls = 0;
  let errors = 0;
  let slowest = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const r = await c.call("bash", { command: "true" }).catch((e) => ({ error: String(e) }));
        slowest = Math.max(slowest, performance.now() - t0);
        if (r.exit_code === 0) calls++;
        else errors++;
      }
    }),
  );
  return { perSecond: calls / SECONDS, errors, slowest };
}

async function clientsRow(face: string, open: () => Promise<Caller>): Promise<void> {
  const one = [await open()];
  await hammer(one); // warm: the daemon or server, its sandbox and spawner
  const alone = await hammer(one);
  const many = [...one, ...(await Promise.all(Array.from({ length: CLIENTS - 1 }, open)))];
  const together = await hammer(many);
  await Promise.all(many.map((c) => c.close()));
  const ok = together.perSecond >= alone.perSecond && together.errors === 0 && together.slowest <= 1000;
  row(
    `${CLIENTS} clients at once over ${face}, \`bash true\` for ${SECONDS} s`,
    `${together.perSecond.toFixed(0)} calls/s (one alone: ${alone.perSecond.toFixed(0)}), ${together.errors} errors, slowest ${together.slowest.toFixed(0)} ms`,
    "≥ one alone, no error, none over 1 s",
    ok,
  );
}

if (runs("clients")) {
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-shared-")));
  try {
    await clientsRow("`--shared` (one stdio process each, one daemon)", () => startServer({ stateDir, args: ["--shared"] }));
  } finally {
    Bun.spawnSync([BINARY, "daemon", "stop", "--state-dir", stateDir], { stdout: "ignore", stderr: "ignore" });
    rmSync(stateDir, { recursive: true, force: true });
  }
  const http = await startHttpServer();
  try {
    await clientsRow("HTTP (one session each, one server)", async () => {
      const { client, transport } = await http.connect();
      return {
        call: async (name: string, args?: Record<string, unknown>) => (await client.callTool({ name, arguments: args })).structuredContent,
        close: () => transport.close(),
      };
    });
  } finally {
    await http.close();
  }
}

// ---------- cold start ----------
if (runs("cold")) {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-cold-")));
  const initialize = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } } })}\n`;
  const init: number[] = [];
  const version: number[] = [];
  for (let i = 0; i <= COLD_STARTS; i++) {
    // Paired: each start of the server beside a --version, so both see the same machine.
    let t0 = performance.now();
    const p = Bun.spawn([BINARY, "mcp", "--state-dir", join(cwd, "state")], { cwd, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    p.stdin.write(initialize);
    p.stdin.flush();
    const reader = p.stdout.getReader();
    let got = "";
    while (!got.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the server ended before answering initialize");
      got += new TextDecoder().decode(value);
    }
    const initMs = performance.now() - t0;
    p.stdin.end();
    await p.exited;
    t0 = performance.now();
    const v = Bun.spawn([BINARY, "--version"], { stdout: "pipe" });
    await new Response(v.stdout).text();
    await v.exited;
    const versionMs = performance.now() - t0;
    if (i === 0) continue; // warm-up: the page cache
    init.push(initMs);
    version.push(versionMs);
  }
  rmSync(cwd, { recursive: true, force: true });
  const over = median(init) - median(version);
  row("cold start: spawn → initialize answered (median)", `${median(init).toFixed(1)} ms; \`--version\` ${median(version).toFixed(1)} ms (+${over.toFixed(1)})`, "≤ `--version` + 15 ms", over <= 15);
}

const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(`\nbench/scale.ts, ${new Date().toISOString().slice(0, 10)}, load average ${load}\n`);
console.log("| workload | measured | goal | |\n|---|---|---|---|");
for (const r of rows) console.log(`| ${r.join(" | ")} |`);
