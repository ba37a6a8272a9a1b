/**
 * Where the time of one `bash {command: "true"}` goes, in-process (no MCP, no second process):
 * each step adds one ingredient of agent-shell's spawn path to the raw Bun.spawn floor.
 * Interleaved rounds, like run.ts. `bun run bench/breakdown.ts`.
 */
import { mkdtempSync, realpathSync, rmSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolHost } from "../src/host/tool-host.ts";
import { childEnv } from "../src/runtime/env.ts";
import { spawnLocalPipes } from "../src/runtime/local/local.ts";
import { createPipe } from "../src/runtime/kernel/pipes.ts";
import { drain, stats } from "./lib.ts";

const N = Number(process.env.N ?? 300);
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "as-breakdown-")));
const host = new ToolHost({ cwd: scratch, config: { state_dir: join(scratch, "state") } });
const hostOff = new ToolHost({ cwd: scratch, config: { state_dir: join(scratch, "state-off"), sandbox: "off" } });

const steps: Record<string, () => Promise<unknown>> = {
  "1 raw Bun.spawn, socketpair pipes": async () => {
    const p = Bun.spawn(["bash", "-c", "true"], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    await Promise.all([drain(p.stdout), drain(p.stderr), p.exited]);
  },
  "2 + detached (setsid)": async () => {
    const p = Bun.spawn(["bash", "-c", "true"], { stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
    await Promise.all([drain(p.stdout), drain(p.stderr), p.exited]);
  },
  "3 + env: childEnv() + cwd": async () => {
    const p = Bun.spawn(["bash", "-c", "true"], { stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true, env: childEnv(), cwd: scratch });
    await Promise.all([drain(p.stdout), drain(p.stderr), p.exited]);
  },
  "4 + pipe2 pipes read via Bun.file(fd).stream()": async () => {
    const [outR, outW] = createPipe();
    const [errR, errW] = createPipe();
    const p = Bun.spawn(["bash", "-c", "true"], { stdin: "ignore", stdout: outW, stderr: errW, detached: true, env: childEnv(), cwd: scratch });
    closeSync(outW);
    closeSync(errW);
    await Promise.all([drain(Bun.file(outR).stream()), drain(Bun.file(errR).stream()), p.exited]);
    closeSync(outR);
    closeSync(errR);
  },
  "5 spawnLocalPipes: through the spawn helper, in a task cgroup and process limit (+ watchdog add/del)": async () => {
    const h = await spawnLocalPipes({ command: "true", cwd: scratch, env: childEnv(), stdin: null });
    await Promise.all([drain(h.stdout), drain(h.stderr!), h.exited]);
    await h.groupAlive();
    h.dispose();
  },
  "6 ToolHost.call bash, --sandbox off (whole tool, no MCP)": async () => {
    const r: any = await hostOff.call("bash", { command: "true" });
    if (r.exit_code !== 0) throw new Error(JSON.stringify(r));
  },
  "7 ToolHost.call bash, sandboxed default (whole tool, no MCP)": async () => {
    const r: any = await host.call("bash", { command: "true" });
    if (r.exit_code !== 0) throw new Error(JSON.stringify(r));
  },
};

const names = Object.keys(steps);
const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (const n of names) for (let i = 0; i < 30; i++) await steps[n]!();
const ROUNDS = 6;
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < names.length; k++) {
    const n = names[(k + r) % names.length]!;
    for (let i = 0; i < N / ROUNDS; i++) {
      const t0 = performance.now();
      await steps[n]!();
      samples[n]!.push(performance.now() - t0);
    }
  }
}
await host.close();
await hostOff.close();
rmSync(scratch, { recursive: true, force: true });

const base = stats(samples[names[0]!]!).p50;
console.log("| step | p50 ms | p99 ms | p50 ÷ raw |\n|---|---|---|---|");
for (const n of names) {
  const s = stats(samples[n]!);
  console.log(`| ${n} | ${s.p50.toFixed(3)} | ${s.p99.toFixed(3)} | ${(s.p50 / base).toFixed(2)}× |`);
}
