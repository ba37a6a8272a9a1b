/**
 * SPEC §14: a caller regex such as `(a|a)*b` (exponential on a backtracking engine) used as
 * task_output's `filter` or as `notify_pattern` leaves the server responsive: a concurrent
 * call is answered within 100 ms, against the compiled binary over MCP.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startServer, type McpSession } from "./helpers/mcp.ts";

setDefaultTimeout(60_000);

// 60 lines of 8000 'a' (the line-length cap): `(a|a)*b` backtracks 2^8000 ways on each.
const SIXTY_LINES = "for i in $(seq 60); do head -c 8000 /dev/zero | tr '\\0' a; echo; done";

let s: McpSession | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** Milliseconds for a task_list call sent while `busy` is in flight. */
async function latencyDuring(session: McpSession, busy: Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await session.call("task_list", {});
  const ms = performance.now() - t0;
  await busy;
  return ms;
}

describe("a catastrophic caller regex does not stall the server", () => {
  test("as task_output filter: a concurrent call is answered within 100 ms, and the filter answers", async () => {
    s = await startServer();
    const bg = await s.call("bash", { command: SIXTY_LINES, run_in_background: true });
    await s.call("task_output", { task_id: bg.task_id, wait: true, timeout: 20 });
    const filtered = s.call("task_output", { task_id: bg.task_id, filter: "(a|a)*b" });
    expect(await latencyDuring(s, filtered)).toBeLessThan(100);
    const r: any = await filtered;
    expect(r.stdout).toBe("");
    const all: any = await s.call("task_output", { task_id: bg.task_id, filter: "^(a|a)*$" });
    // 60 matching lines of 8,000 bytes: shaped, each kept line keeps its first 500 bytes (SPEC §15).
    expect(all.stdout.startsWith(`${"a".repeat(500)}\n[… `)).toBe(true);
  });

  test("as notify_pattern: calls made while the watch tests the lines are answered within 100 ms", async () => {
    s = await startServer();
    const bg: any = await s.call("bash", { command: `${SIXTY_LINES}; sleep 30`, run_in_background: true, notify_pattern: "(a|a)*b" });
    expect(bg.task_id).toBeDefined();
    // Call until all 60 lines went through the watch, timing every call on the way.
    const latencies: number[] = [];
    for (let total = 0; total < 60 * 8001; ) {
      const t0 = performance.now();
      const out: any = await s.call("task_output", { task_id: bg.task_id, max_bytes: 1 });
      latencies.push(performance.now() - t0);
      total = out.stdout_total_bytes;
    }
    expect(Math.max(...latencies)).toBeLessThan(100);
    await s.call("kill_shell", { task_id: bg.task_id });
  });
});
