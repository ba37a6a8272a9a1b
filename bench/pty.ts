/**
 * PTY throughput and memory: one command writes 50 MB of line text, run as a background
 * task through pipes and through a tty (rendered by the headless terminal), each in a fresh
 * server (compiled binary over MCP), plus the raw PTY floor (Bun terminal, bytes counted,
 * nothing rendered) in this process. Reports MB/s and the server's peak RSS (VmHWM).
 * `bun run build.ts && bun run bench/pty.ts` (MB=50 by default; ROUNDS=3).
 */
import { readFileSync } from "node:fs";
import { startServer } from "../tests/helpers/mcp.ts";

const MB = Number(process.env.MB ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BYTES = MB * 1_000_000;
const COMMAND = `yes 'the quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJ' | head -c ${BYTES}`;
const RSS_LIMIT_MB = 200;

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "latin1");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

async function throughServer(tty: boolean): Promise<{ mbps: number; peakMb: number; total: number }> {
  const s = await startServer();
  try {
    const t0 = performance.now();
    const r = await s.call("bash", { command: COMMAND, run_in_background: true, ...(tty ? { tty: true } : {}) });
    const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 600, max_bytes: 1000 });
    const seconds = (performance.now() - t0) / 1000;
    if (out.status !== "completed" || out.exit_code !== 0) throw new Error(JSON.stringify(out).slice(0, 500));
    return { mbps: MB / seconds, peakMb: peakRssMb(s.pid), total: out.stdout_total_bytes };
  } finally {
    await s.close();
  }
}

async function rawPty(): Promise<number> {
  let bytes = 0;
  const t0 = performance.now();
  const p = Bun.spawn(["bash", "-c", COMMAND], { detached: true, terminal: { cols: 120, rows: 30, data: (_t, d) => (bytes += d.byteLength) } });
  await p.exited;
  p.terminal!.close();
  const seconds = (performance.now() - t0) / 1000;
  if (bytes < BYTES) throw new Error(`raw PTY got ${bytes} bytes`);
  return MB / seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: Record<string, { mbps: number[]; peak: number[] }> = { "pipes (server)": { mbps: [], peak: [] }, "tty (server, rendered)": { mbps: [], peak: [] }, "raw PTY floor (no server)": { mbps: [], peak: [] } };
let renderedTotal = 0;
for (let round = 0; round < ROUNDS; round++) {
  const pipes = await throughServer(false);
  rows["pipes (server)"]!.mbps.push(pipes.mbps);
  rows["pipes (server)"]!.peak.push(pipes.peakMb);
  const tty = await throughServer(true);
  rows["tty (server, rendered)"]!.mbps.push(tty.mbps);
  rows["tty (server, rendered)"]!.peak.push(tty.peakMb);
  renderedTotal = tty.total;
  rows["raw PTY floor (no server)"]!.mbps.push(await rawPty());
}

console.log(`${MB} MB of line text, ${ROUNDS} rounds, medians — ${new Date().toISOString()}, ${navigatorInfo()}`);
for (const [name, r] of Object.entries(rows)) {
  const peak = r.peak.length ? `peak RSS ${median(r.peak).toFixed(0)} MB (max ${Math.max(...r.peak).toFixed(0)})` : "";
  console.log(`  ${name.padEnd(28)} ${median(r.mbps).toFixed(1).padStart(7)} MB/s  ${peak}`);
}
console.log(`  rendered tty text: ${renderedTotal} bytes`);
const worst = Math.max(...rows["tty (server, rendered)"]!.peak);
console.log(worst <= RSS_LIMIT_MB ? `OK: tty peak RSS ${worst.toFixed(0)} MB ≤ ${RSS_LIMIT_MB} MB` : `FAIL: tty peak RSS ${worst.toFixed(0)} MB > ${RSS_LIMIT_MB} MB`);
if (worst > RSS_LIMIT_MB) process.exitCode = 1;

function navigatorInfo(): string {
  const cpus = readFileSync("/proc/cpuinfo", "latin1").match(/^processor/gm)?.length ?? 0;
  const model = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "latin1"))?.[1] ?? "cpu";
  return `${cpus} × ${model}, Bun ${Bun.version}`;
}
