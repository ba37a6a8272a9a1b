/**
 * CLI latency: `agent-shell ps` against a running daemon (target ≤ 50 ms median) and
 * `agent-shell run -- true` against a raw `bash -c true` (target ≤ 1.5×), with the
 * binary's own start-up (`--version`) as the floor, all measured in the same run.
 * Run: AGENT_SHELL_BINARY=dist/agent-shell bun run bench/cli.ts [--json]
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const BINARY = process.env.AGENT_SHELL_BINARY ?? resolve(import.meta.dir, "../dist/agent-shell");
const RUNS = Number(process.env.BENCH_RUNS ?? 30);

export interface CliBench {
  runs: number;
  ps_median_ms: number;
  run_true_median_ms: number;
  bash_true_median_ms: number;
  version_median_ms: number;
  run_vs_bash: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Wall time of one process from spawn to exit, in ms. */
async function wall(argv: string[], env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn(argv, { env, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  const code = await p.exited;
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}`);
  return ms;
}

async function medianOf(argv: string[], env: Record<string, string>): Promise<number> {
  for (let i = 0; i < 3; i++) await wall(argv, env); // warm the page cache
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await wall(argv, env));
  return median(times);
}

export async function benchCli(): Promise<CliBench> {
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-cli-")));
  const env: Record<string, string> = { ...(process.env as Record<string, string>), AGENT_SHELL_STATE_DIR: stateDir };
  delete env.NO_COLOR;
  try {
    await wall([BINARY, "daemon", "start"], env);
    // A realistic table: a few live tasks.
    for (let i = 0; i < 5; i++) await wall([BINARY, "start", "--", `sleep 600.${i}`], env);
    const ps = await medianOf([BINARY, "ps"], env);
    const version = await medianOf([BINARY, "--version"], env);
    const runTrue = await medianOf([BINARY, "run", "--", "true"], env);
    const bashTrue = await medianOf(["bash", "-c", "true"], env);
    return {
      runs: RUNS,
      ps_median_ms: round(ps),
      run_true_median_ms: round(runTrue),
      bash_true_median_ms: round(bashTrue),
      version_median_ms: round(version),
      run_vs_bash: round(runTrue / bashTrue),
    };
  } finally {
    await wall([BINARY, "daemon", "stop"], env).catch(() => {});
    rmSync(stateDir, { recursive: true, force: true });
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

if (import.meta.main) {
  const r = await benchCli();
  if (process.argv.includes("--json")) console.log(JSON.stringify(r));
  else {
    console.log(`cli: ${r.runs} runs each, medians (${new Date().toISOString()})`);
    console.log(`  agent-shell ps (daemon up, 5 tasks)  ${r.ps_median_ms} ms   target ≤ 50 ms  ${r.ps_median_ms <= 50 ? "ok" : "MISSED"}`);
    console.log(`  agent-shell run -- true               ${r.run_true_median_ms} ms`);
    console.log(`  bash -c true                          ${r.bash_true_median_ms} ms   ratio ${r.run_vs_bash}×  target ≤ 1.5×  ${r.run_vs_bash <= 1.5 ? "ok" : "MISSED"}`);
    console.log(`  agent-shell --version (start-up floor) ${r.version_median_ms} ms`);
  }
}
