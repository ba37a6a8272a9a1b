/**
 * Registry scale: 500 concurrent background `sleep 60` tasks — task_list latency, server
 * memory, and the time to kill them all (target ≤ 5 s, none left).
 * Run: bun run build.ts && bun run bench/registry.ts
 */
import { startServer } from "../tests/helpers/mcp.ts";
import { processesMatching } from "../tests/helpers/procs.ts";

const N = Number(process.env.BENCH_TASKS ?? 500);
const marker = `60.${process.pid}`;
const s = await startServer();
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const rssMb = (field: "VmRSS" | "VmHWM") => {
  const status = require("node:fs").readFileSync(`/proc/${s.pid}/status`, "utf8") as string;
  return Number(status.match(new RegExp(`${field}:\\s+(\\d+)`))![1]) / 1024;
};
try {
  let t0 = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < N; i++) ids.push((await s.call("bash", { command: `sleep ${marker}`, run_in_background: true })).task_id);
  const startMs = performance.now() - t0;
  const listTimes: number[] = [];
  for (let i = 0; i < 30; i++) {
    t0 = performance.now();
    const r = await s.call("task_list", { status: "running" });
    listTimes.push(performance.now() - t0);
    if (r.tasks.length !== N) throw new Error(`task_list shows ${r.tasks.length}, expected ${N}`);
  }
  const rss = rssMb("VmRSS");
  t0 = performance.now();
  const kills = await Promise.all(ids.map((task_id) => s.call("kill_shell", { task_id })));
  const killMs = performance.now() - t0;
  const killed = kills.filter((k) => k.status === "killed").length;
  const survivors = processesMatching(`sleep ${marker}`).length;
  console.log(`| workload | result |\n|---|---|`);
  console.log(`| start ${N} background tasks (sequential calls) | ${startMs.toFixed(0)} ms (${(startMs / N).toFixed(2)} ms each) |`);
  console.log(`| task_list with ${N} running, p50 / p99 | ${pct(listTimes, 50).toFixed(2)} / ${pct(listTimes, 99).toFixed(2)} ms |`);
  console.log(`| server RSS with ${N} running | ${rss.toFixed(0)} MB (peak ${rssMb("VmHWM").toFixed(0)} MB) |`);
  console.log(`| kill all ${N} (concurrent kill_shell) | ${killMs.toFixed(0)} ms, ${killed} killed, ${survivors} survivors |`);
} finally {
  await s.close();
}
