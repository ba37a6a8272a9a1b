/**
 * Far-side hosts (SPEC §16): what a call costs on an open pipe into a real Podman container.
 * In one run, interleaved in rounds so machine load hits all alike:
 *  - foreground `true` on the container host through the near server (the pipe reused),
 *  - `podman exec NAME true` (the engine's own exec: what every call would cost without a pipe),
 *  - the same `true` call made inside the container to its own agent-shell (`mcp --shared`);
 * then 100 sequential background starts on the container host vs the same 100 locally.
 * Run after `bun run build.ts`: `bun run bench/far-hosts.ts` (needs podman and runc); writes bench/far-results.json.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { version } from "../package.json";
import { podman, startContainer } from "../tests/helpers/container.ts";
import { type McpSession, startServer } from "../tests/helpers/mcp.ts";
import { machine, round, stats } from "./lib.ts";

const ROUNDS = 5;
const PIPE_CALLS = 40; // per round
const EXEC_CALLS = 8; // per round
const PACED_CALLS = 10; // per round, 100 ms apart (an agent's pace)
const GAP_MS = 100;
const STARTS = 100;
const START_ROUNDS = 3;

const box = await startContainer("as-bench-far");
const dir = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-far-")));
let near: McpSession | null = null;
let local: McpSession | null = null;
try {
  const config = join(dir, "config.toml");
  writeFileSync(config, `[hosts.box]\ncontainer = "${box.name}"\nengine = "podman"\n`);
  near = await startServer({ args: ["--config", config] });
  local = await startServer({});
  const t0 = performance.now();
  const first = await near.call("bash", { command: "true", host: "box" }); // copies agent-shell there, opens the pipe
  const firstMs = performance.now() - t0;
  if (first.exit_code !== 0) throw new Error(`first call failed: ${JSON.stringify(first)}`);
  const farAgent = `/root/.cache/agent-shell/${version}/agent-shell`;

  const pipe: number[] = [];
  const exec: number[] = [];
  const inside: number[] = [];
  const pipeList: number[] = [];
  const pipePaced: number[] = [];
  const insidePaced: number[] = [];
  const insideList: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < PIPE_CALLS; i++) {
      const t = performance.now();
      await near.call("bash", { command: "true", host: "box" });
      pipe.push(performance.now() - t);
    }
    for (let i = 0; i < PACED_CALLS; i++) {
      await Bun.sleep(GAP_MS);
      const t = performance.now();
      await near.call("bash", { command: "true", host: "box" });
      pipePaced.push(performance.now() - t);
    }
    for (let i = 0; i < PIPE_CALLS; i++) {
      const t = performance.now();
      await near.call("task_list", { status: "running", host: "box" });
      pipeList.push(performance.now() - t);
    }
    for (let i = 0; i < EXEC_CALLS; i++) {
      const t = performance.now();
      const x = await podman(["exec", box.name, "true"]);
      exec.push(performance.now() - t);
      if (x.code !== 0) throw new Error(x.stderr);
    }
    const probe = await podman(["exec", box.name, process.execPath, join(import.meta.dir, "far-local-probe.ts"), farAgent, String(PIPE_CALLS), String(PACED_CALLS)]);
    if (probe.code !== 0) throw new Error(`probe failed: ${probe.stderr}`);
    const measured = JSON.parse(probe.stdout) as { times: number[]; lists: number[]; paced: number[] };
    insidePaced.push(...measured.paced);
    inside.push(...measured.times);
    insideList.push(...measured.lists);
  }

  const starts = { far: [] as number[], local: [] as number[] };
  for (let r = 0; r < START_ROUNDS; r++) {
    for (const [kind, session, host] of [
      ["far", near, { host: "box" }],
      ["local", local, {}],
    ] as const) {
      const t = performance.now();
      for (let i = 0; i < STARTS; i++) {
        const s = await session.call("bash", { command: "true", run_in_background: true, ...host });
        if (s.status !== "running") throw new Error(JSON.stringify(s));
      }
      starts[kind].push(performance.now() - t);
    }
  }

  const p = stats(pipe);
  const e = stats(exec);
  const i = stats(inside);
  const pl = stats(pipeList);
  const pp = stats(pipePaced);
  const ip = stats(insidePaced);
  const il = stats(insideList);
  const far100 = stats(starts.far).p50;
  const local100 = stats(starts.local).p50;
  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    first_call_ms: round(firstMs, 0),
    pipe_true_ms: { p50: round(p.p50), p99: round(p.p99) },
    podman_exec_true_ms: { p50: round(e.p50), p99: round(e.p99) },
    inside_true_ms: { p50: round(i.p50), p99: round(i.p99) },
    pipe_over_exec: round(p.p50 / e.p50, 3),
    pipe_minus_inside_ms: round(p.p50 - i.p50),
    paced_pipe_true_ms: { p50: round(pp.p50), p99: round(pp.p99) },
    paced_inside_true_ms: { p50: round(ip.p50), p99: round(ip.p99) },
    paced_pipe_over_exec: round(pp.p50 / e.p50, 3),
    pipe_task_list_ms: { p50: round(pl.p50), p99: round(pl.p99) },
    inside_task_list_ms: { p50: round(il.p50), p99: round(il.p99) },
    starts_100_far_ms: round(far100, 0),
    starts_100_local_ms: round(local100, 0),
    starts_ratio: round(far100 / local100, 2),
  };
  console.log(JSON.stringify(result, null, 2));
  writeFileSync(join(import.meta.dir, "far-results.json"), JSON.stringify(result, null, 2) + "\n");
  console.log(
    [
      `| measure | median | p99 | goal |`,
      `|---|---|---|---|`,
      `| foreground \`true\` back to back on the container host (open pipe) | ${round(p.p50, 1)} ms | ${round(p.p99, 1)} ms | ≤ 1/10 of podman exec: ${result.pipe_over_exec <= 0.1 ? "met" : "missed"} (${result.pipe_over_exec}) |`,
      `| \`podman exec NAME true\` | ${round(e.p50, 1)} ms | ${round(e.p99, 1)} ms | |`,
      `| the same back to back inside the container, to its own agent-shell | ${round(i.p50, 1)} ms | ${round(i.p99, 1)} ms | pipe within 2 ms: ${result.pipe_minus_inside_ms <= 2 ? "met" : "missed"} (+${result.pipe_minus_inside_ms} ms) |`,
      `| the same at an agent's pace (100 ms apart), open pipe | ${round(pp.p50, 1)} ms | ${round(pp.p99, 1)} ms | ≤ 1/10 of podman exec: ${result.paced_pipe_over_exec <= 0.1 ? "met" : "missed"} (${result.paced_pipe_over_exec}) |`,
      `| the same at an agent's pace, inside the container | ${round(ip.p50, 1)} ms | ${round(ip.p99, 1)} ms | pipe within 2 ms: ${pp.p50 - ip.p50 <= 2 ? "met" : "missed"} (+${round(pp.p50 - ip.p50)} ms) |`,
      `| task_list on the container host (open pipe) | ${round(pl.p50, 2)} ms | ${round(pl.p99, 1)} ms | the pipe's own cost: +${round(pl.p50 - il.p50, 2)} ms |`,
      `| the same task_list inside the container | ${round(il.p50, 2)} ms | ${round(il.p99, 1)} ms | |`,
      `| 100 background starts on the container host | ${round(far100, 0)} ms | | ≤ 2× local: ${result.starts_ratio <= 2 ? "met" : "missed"} (${result.starts_ratio}×) |`,
      `| 100 background starts locally | ${round(local100, 0)} ms | | |`,
      `| first call (copies agent-shell there, opens the pipe) | ${round(firstMs, 0)} ms | | |`,
    ].join("\n"),
  );
} finally {
  await near?.close();
  await local?.close();
  await box.remove();
  rmSync(dir, { recursive: true, force: true });
}
