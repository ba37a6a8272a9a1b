/**
 * CLI latency, against the compiled binary (`AGENT_SHELL_BINARY` overrides dist/agent-shell):
 *  - `agent-shell ps` with the daemon up and 5 live tasks (target: median ≤ 50 ms);
 *  - `agent-shell run -- true` against a raw `bash -c true` (target: ≤ 1.5×), with the
 *    binary's bare start-up (`--version`) as the floor any CLI verb pays.
 * The variants are interleaved run by run, so background load hits them alike.
 * Run: bun run build.ts && bun run bench/cli.ts [--json]
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../tests/helpers/mcp.ts";
import { machine, round, stats, type Stats } from "./lib.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const WARMUP = 3;

/** CPU time (user + system, ms) of the last process `wall` ran: less sensitive than wall time to other load. */
let lastCpuMs = 0;

/** Wall time of one process from spawn to exit, in ms. */
async function wall(argv: string[], env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn(argv, { env, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  const code = await p.exited;
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}`);
  const cpu = p.resourceUsage()?.cpuTime;
  lastCpuMs = cpu ? Number(cpu.user + cpu.system) / 1000 : NaN;
  return ms;
}

const summary = (s: Stats) => ({ p50: round(s.p50), p99: round(s.p99), mean: round(s.mean), min: round(s.min) });

export async function benchCli() {
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-cli-")));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AGENT_SHELL_")) env[k] = v;
  env.AGENT_SHELL_STATE_DIR = stateDir;
  delete env.NO_COLOR;
  const variants: Record<string, string[]> = {
    ps: [BINARY, "ps"],
    run_true: [BINARY, "run", "--", "true"],
    bash_true: ["bash", "-c", "true"],
    version: [BINARY, "--version"],
  };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const host = machine();
  try {
    await wall([BINARY, "daemon", "start"], env);
    for (let i = 0; i < 5; i++) await wall([BINARY, "start", "--", `sleep 600.${i}`], env);
    for (let i = 0; i < WARMUP + RUNS; i++) {
      for (const [name, argv] of Object.entries(variants)) {
        const ms = await wall(argv, env);
        if (i >= WARMUP) {
          samples[name]!.push(ms);
          cpu[name]!.push(lastCpuMs);
        }
      }
    }
  } finally {
    await wall([BINARY, "daemon", "stop"], env).catch(() => {});
    rmSync(stateDir, { recursive: true, force: true });
  }
  const s = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v)]));
  const c = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round(stats(v).p50)]));
  return {
    machine: host,
    runs: RUNS,
    ps_ms: summary(s.ps!),
    run_true_ms: summary(s.run_true!),
    bash_true_ms: summary(s.bash_true!),
    version_ms: summary(s.version!),
    run_vs_bash_p50: round(s.run_true!.p50 / s.bash_true!.p50),
    run_above_startup_p50_ms: round(s.run_true!.p50 - s.version!.p50),
    cpu_p50_ms: c,
    targets: { ps_p50_ms: 50, run_vs_bash: 1.5 },
  };
}

if (import.meta.main) {
  const r = await benchCli();
  if (process.argv.includes("--json")) console.log(JSON.stringify(r, null, 2));
  else {
    const ok = (b: boolean) => (b ? "ok" : "MISSED");
    console.log(`cli bench — ${r.machine.date}, ${r.machine.nproc} × ${r.machine.model}, load ${r.machine.loadavg_at_start}, ${r.runs} runs each (p50 / p99 ms)`);
    console.log(`| agent-shell ps (daemon up, 5 tasks) | ${r.ps_ms.p50} / ${r.ps_ms.p99} | target p50 ≤ 50 ms: ${ok(r.ps_ms.p50 <= 50)} |`);
    console.log(`| agent-shell run -- true              | ${r.run_true_ms.p50} / ${r.run_true_ms.p99} | ${r.run_vs_bash_p50}× bash -c true; target ≤ 1.5×: ${ok(r.run_vs_bash_p50 <= 1.5)} |`);
    console.log(`| bash -c true (raw floor)             | ${r.bash_true_ms.p50} / ${r.bash_true_ms.p99} | |`);
    console.log(`| agent-shell --version (start-up)     | ${r.version_ms.p50} / ${r.version_ms.p99} | run -- true costs ${r.run_above_startup_p50_ms} ms above it |`);
    const cp = r.cpu_p50_ms;
    console.log(`CPU time p50 (user+sys, ms; the child's own, so less load-sensitive): ps ${cp.ps}, run -- true ${cp.run_true}, bash -c true ${cp.bash_true}, --version ${cp.version}`);
  }
}
