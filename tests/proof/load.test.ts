/**
 * Load: background tasks started in one burst, concurrent task_output waits, concurrent
 * foreground calls. Every task's exit code and every byte of its output is checked against
 * what the command was built to print, every end is announced exactly once, the server's
 * peak memory (VmHWM) is reported and bounded, and nothing is left running.
 * CI runs the standard figures (1,000 / 200 / 100, ~7 s); PROOF_HEAVY=1 triples them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { HEAVY, proofLine, RawSession, vmHWM, waitNoEnvProcess } from "./helpers.ts";

const N_BG = Number(process.env.PROOF_LOAD_TASKS ?? (HEAVY ? 3000 : 1000));
const N_WAIT = HEAVY ? 500 : 200;
const N_FG = HEAVY ? 200 : 100;
/** Peak RSS allowed for the server, kB: generous, it is there to catch unbounded growth. */
const MAX_HWM_KB = 1024 * 1024;
const MARK = "AGENT_SHELL_PROOF_LOAD";
const markValue = String(process.pid);

/** Task i prints `lines` copies of `line-i`, then `err-i` on stderr, and exits with i % 7. */
function workload(i: number): { command: string; stdout: string; stderr: string; exit: number } {
  const lines = i % 50 === 0 ? 20_000 : 1 + ((i * 37) % 300); // every 50th spills to the spool
  const line = `line-${i}\n`;
  return {
    command: `sleep 0.${(i % 9) + 1}; yes line-${i} | head -n ${lines}; echo err-${i} >&2; exit ${i % 7}`,
    stdout: line.repeat(lines),
    stderr: `err-${i}\n`,
    exit: i % 7,
  };
}

let s: RawSession | undefined;
afterAll(async () => {
  if (s?.alive) await s.close();
  s?.cleanup();
});

describe("load", () => {
  test(
    `${N_BG} background tasks in a burst, ${N_WAIT} concurrent waits, ${N_FG} concurrent foreground calls: nothing lost`,
    async () => {
      s = new RawSession({ env: { [MARK]: markValue, AGENT_SHELL_MAX_FINISHED_TASKS: "100000" } });
      const session = s;
      await session.initialize();
      const t0 = performance.now();

      // 1. the burst: every start request written before any answer is awaited
      const specs = Array.from({ length: N_BG }, (_, i) => workload(i));
      const started = await Promise.all(specs.map((w) => session.call("bash", { command: w.command, run_in_background: true }, 120_000)));
      const ids = started.map((r, i) => {
        if (typeof r.task_id !== "string") throw new Error(`start #${i} failed: ${JSON.stringify(r).slice(0, 300)}`);
        return r.task_id as string;
      });
      expect(new Set(ids).size).toBe(N_BG);
      const tStarted = performance.now();
      // The list of them all stays within the budget (SPEC §18) and counts every one.
      const listed = await session.call("task_list", {});
      const listedCounts = Object.values(listed.counts ?? {}) as number[];
      const newest = ids.reduce((a, b) => (Number(b.slice(3)) > Number(a.slice(3)) ? b : a));

      // 2. concurrent waits on the first N_WAIT tasks, while 3. foreground calls run alongside
      const waits = ids.slice(0, N_WAIT).map((id) => session.call("task_output", { task_id: id, wait: true, timeout: 120, max_bytes: 1_000_000 }, 180_000));
      // Byte-checked below: a budget above their size, so nothing is shaped (SPEC §15).
      const fgSpecs = Array.from({ length: N_FG }, (_, i) => ({ n: 1 + ((i * 53) % 2000), code: i % 5, i }));
      const fgs = fgSpecs.map((f) => session.call("bash", { command: `seq 1 ${f.n}; echo fg-${f.i} >&2; exit ${f.code}`, timeout_seconds: 120, max_output_bytes: 100_000 }, 180_000));
      const [waited, fgResults] = await Promise.all([Promise.all(waits), Promise.all(fgs)]);

      let bytesLost = 0;
      const wrong: string[] = [];
      const checkTask = (i: number, r: any) => {
        const w = specs[i]!;
        if (r.status !== "completed") wrong.push(`${ids[i]}: status ${r.status}`);
        if (r.exit_code !== w.exit) wrong.push(`${ids[i]}: exit ${r.exit_code}, want ${w.exit}`);
        if (r.stdout_total_bytes !== w.stdout.length) wrong.push(`${ids[i]}: stdout_total_bytes ${r.stdout_total_bytes}, want ${w.stdout.length}`);
        if (r.stdout !== w.stdout) {
          bytesLost += Math.abs(w.stdout.length - String(r.stdout ?? "").length) || 1;
          wrong.push(`${ids[i]}: stdout differs (${String(r.stdout).length} vs ${w.stdout.length} bytes)`);
        }
        if (r.stderr !== w.stderr) {
          bytesLost += Math.abs(w.stderr.length - String(r.stderr ?? "").length) || 1;
          wrong.push(`${ids[i]}: stderr ${JSON.stringify(r.stderr)}`);
        }
      };
      waited.forEach((r, i) => checkTask(i, r));
      fgResults.forEach((r, k) => {
        const f = fgSpecs[k]!;
        const want = Array.from({ length: f.n }, (_, j) => `${j + 1}\n`).join("");
        if (r.exit_code !== f.code) wrong.push(`fg-${k}: exit ${r.exit_code}, want ${f.code}`);
        if (r.stdout !== want) {
          bytesLost += Math.abs(want.length - String(r.stdout ?? "").length) || 1;
          wrong.push(`fg-${k}: stdout differs`);
        }
        if (r.stderr !== `fg-${k}\n`) wrong.push(`fg-${k}: stderr ${JSON.stringify(r.stderr)}`);
      });

      // 4. every other task, waited for in one multi-task call each of 100
      for (let from = N_WAIT; from < N_BG; from += 100) {
        const chunk = ids.slice(from, from + 100);
        const r = await session.call("task_output", { task_ids: chunk, wait: true, until: "all", timeout: 120, max_bytes: 1_000_000 }, 180_000);
        if (!Array.isArray(r.results)) throw new Error(`multi-wait failed: ${JSON.stringify(r).slice(0, 300)}`);
        r.results.forEach((res: any, k: number) => checkTask(from + k, res));
      }
      const tDone = performance.now();

      // 5. every end announced exactly once; nothing still running
      const deadline = Date.now() + 10_000;
      const ended = () => session.notifications.filter((n) => n.method === "notifications/message" && n.params?.data?.event === "task_finished");
      while (ended().length < N_BG && Date.now() < deadline) await Bun.sleep(50);
      const perTask = new Map<string, number>();
      for (const n of ended()) perTask.set(n.params.data.task_id, (perTask.get(n.params.data.task_id) ?? 0) + 1);
      const missingNotices = ids.filter((id) => perTask.get(id) !== 1);
      const running = await session.call("task_list", { status: "running" });
      const hwm = vmHWM(session.pid);

      const code = await session.close(20_000);
      const left = await waitNoEnvProcess(MARK, markValue, 5000);
      proofLine(
        "load",
        { tried: N_BG + N_WAIT + N_FG, crashes: code === 0 ? 0 : 1, hangs: 0, orphans: left.length, bytes_lost: bytesLost },
        `tasks=${N_BG} waits=${N_WAIT} foreground=${N_FG} burst_ms=${Math.round(tStarted - t0)} all_done_ms=${Math.round(tDone - t0)} vmhwm_kb=${hwm} wrong=${wrong.length} notices_missing_or_duplicated=${missingNotices.length}`,
      );
      if (wrong.length) console.log("first problems:\n  " + wrong.slice(0, 20).join("\n  "));
      expect(Buffer.byteLength(JSON.stringify(listed))).toBeLessThanOrEqual(8000);
      expect([listed.total, listedCounts.reduce((a, b) => a + b, 0)]).toEqual([N_BG, N_BG]);
      expect(listed.tasks.at(-1).task_id).toBe(newest);
      expect(wrong).toEqual([]);
      expect(bytesLost).toBe(0);
      expect(missingNotices).toEqual([]);
      expect(running.tasks).toEqual([]);
      expect(hwm).not.toBeNull();
      expect(hwm!).toBeLessThan(MAX_HWM_KB);
      expect(code).toBe(0);
      expect(left).toEqual([]);
    },
    HEAVY ? 900_000 : 150_000,
  );
});
