/**
 * What the linear-time guards cost, measured rather than asserted (the tests check what
 * they do; timings depend on the machine and its load):
 *  - classifying 120 KB commands built to make whole-text regexes quadratic (CPU ms; the
 *    mark a fix should keep: well under 50 ms each);
 *  - a caller regex on catastrophic patterns over 60 lines of 8,000 'a' (ms; under 500);
 *  - shaping a 200 MB flood from its ends and one pass over the middle (ms);
 *  - a concurrent call's latency while a catastrophic `filter` and `notify_pattern` run in
 *    the compiled server (ms; under 100).
 * Run after `bun run build.ts`: `bun run bench/guards.ts`.
 */
import { shapeOutput, type ByteSource } from "../src/background/output/index.ts";
import { compileUserRegex } from "../src/safety/regex/regex-guard.ts";
import { parserReady } from "../src/safety/parser/bash-parser.ts";
import { classifyCommand } from "../src/safety/rules/decide.ts";
import { startServer } from "../tests/helpers/mcp.ts";
import { machine, round } from "./lib.ts";

const lines: string[] = [];
const report = (label: string, ms: number, mark?: number) => lines.push(`${label}: ${round(ms, 1)} ms${mark !== undefined ? ` (mark ${mark} ms)` : ""}`);

await parserReady();

// Classification, CPU time of this process (the machine's other load does not count).
const commands: [string, string][] = [
  ["40,000 separators", "a;b".repeat(40_000)],
  ["git push with many words", "git push " + "a ".repeat(60_000)],
  ["kill -0 with many pids then a flag", "kill -0 " + "1 ".repeat(60_000) + "-x"],
  ["'git push ' repeated", "git push ".repeat(14_000)],
  ["git with 40,000 options", "git " + "-x ".repeat(40_000)],
  ["spaces after a separator", ";" + " ".repeat(120_000)],
  ["40,000 '; rm -'", "; rm -".repeat(20_000)],
];
for (const [label, command] of commands) {
  classifyCommand(command); // warm-up: JIT, not regex work
  const start = process.cpuUsage();
  classifyCommand(command);
  const used = process.cpuUsage(start);
  report(`classify ${label}`, (used.user + used.system) / 1000, 50);
}

// Caller regexes on catastrophic patterns.
const line = "a".repeat(8000);
for (const p of ["(a|a)*b", "^(a+)+$", "(\\w+)*!", "(a*)*b", ".*.*.*.*x", "(x+x+)+y"]) {
  const matcher = compileUserRegex(p) as RegExp;
  const start = performance.now();
  for (let i = 0; i < 60; i++) matcher.test(line);
  report(`regex ${p} over 60 × 8,000 'a'`, performance.now() - start, 500);
}

// A 200 MB flood: 10,000,000 lines of 20 bytes, one error line in the middle.
{
  const encoder = new TextEncoder();
  const tick = encoder.encode("progress tick .....\n");
  const error = encoder.encode("fatal: disk I/O err\n");
  const errorAt = 5_000_000 * 20;
  const total = 10_000_000 * 20;
  const pattern = new Uint8Array((1 << 20) + 40);
  for (let i = 0; i < pattern.length; i += 20) pattern.set(tick.subarray(0, Math.min(20, pattern.length - i)), i);
  const flood: ByteSource = {
    total,
    read(a, b) {
      const out = new Uint8Array(b - a);
      for (let at = a; at < b; ) {
        const n = Math.min(b - at, 1 << 20);
        out.set(pattern.subarray(at % 20, (at % 20) + n), at - a);
        at += n;
      }
      for (let k = Math.max(a, errorAt); k < Math.min(b, errorAt + 20); k++) out[k - a] = error[k - errorAt]!;
      return out;
    },
  };
  const start = performance.now();
  shapeOutput([{ source: flood, start: 0, end: total }], { budget: 8000 });
  report("shape a 200 MB flood", performance.now() - start);
}

// The compiled server stays responsive while a catastrophic caller regex runs.
{
  const SIXTY_LINES = "for i in $(seq 60); do head -c 8000 /dev/zero | tr '\\0' a; echo; done";
  const s = await startServer();
  try {
    const bg = await s.call("bash", { command: SIXTY_LINES, run_in_background: true });
    await s.call("task_output", { task_id: bg.task_id, wait: true, timeout: 20 });
    const filtered = s.call("task_output", { task_id: bg.task_id, filter: "(a|a)*b" });
    const t0 = performance.now();
    await s.call("task_list", {});
    report("task_list during a (a|a)*b filter", performance.now() - t0, 100);
    await filtered;
    const watched = await s.call("bash", { command: `${SIXTY_LINES}; sleep 30`, run_in_background: true, notify_pattern: "(a|a)*b" });
    let worst = 0;
    for (let total = 0; total < 60 * 8001; ) {
      const t = performance.now();
      total = (await s.call("task_output", { task_id: watched.task_id, max_bytes: 1 })).stdout_total_bytes;
      worst = Math.max(worst, performance.now() - t);
    }
    report("slowest task_output while a (a|a)*b notify_pattern watches", worst, 100);
    await s.call("kill_shell", { task_id: watched.task_id });
  } finally {
    await s.close();
  }
}

console.log(JSON.stringify(machine()));
for (const l of lines) console.log(l);
