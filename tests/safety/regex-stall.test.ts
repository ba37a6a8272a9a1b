/**
 * SPEC §14: a caller regex such as `(a|a)*b` (exponential on a backtracking engine) used as
 * task_output's `filter` or as `notify_pattern` leaves the server responsive: concurrent
 * calls are answered and the regex answers, against the compiled binary over MCP (a
 * backtracking engine would never finish; the latency itself is measured by bench/guards.ts).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startServer, type McpSession } from "../helpers/mcp.ts";

setDefaultTimeout(60_000);

// 60 lines of 8000 'a' (the line-length cap): `(a|a)*b` backtracks 2^8000 ways on each.
const SIXTY_LINES = "for i in $(seq 60); do head -c 8000 /dev/zero | tr '\\0' a; echo; done";

let s: McpSession | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("a catastrophic caller regex does not stall the server", () => {
  test("as task_output filter: a concurrent call is answered, and the filter answers", async () => {
    s = await startServer();
    const bg = await s.call("bash", { command: SIXTY_LINES, run_in_background: true });
    await s.call("task_output", { task_id: bg.task_id, wait: true, timeout: 20 });
    const filtered = s.call("task_output", { task_id: bg.task_id, filter: "(a|a)*b" });
    expect((await s.call("task_list", {})).tasks).toHaveLength(1);
    const r: any = await filtered;
    expect(r.stdout).toBe("");
    const all: any = await s.call("task_output", { task_id: bg.task_id, filter: "^(a|a)*$" });
    // 60 matching lines of 8,000 bytes: shaped, each kept line cut to its head and tail (SPEC §15).
    expect(all.stdout).toMatch(/^a{500,}\n\[… part of 1 line truncated/);
  });

  test("as notify_pattern: calls made while the watch tests the lines are answered", async () => {
    s = await startServer();
    const bg: any = await s.call("bash", { command: `${SIXTY_LINES}; sleep 30`, run_in_background: true, notify_pattern: "(a|a)*b" });
    expect(bg.task_id).toBeDefined();
    // Call until all 60 lines went through the watch: each call is answered meanwhile.
    for (let total = 0; total < 60 * 8001; ) {
      const out: any = await s.call("task_output", { task_id: bg.task_id, max_bytes: 1 });
      expect(out.status).toBe("running");
      total = out.stdout_total_bytes;
    }
    await s.call("kill_shell", { task_id: bg.task_id });
  });
});
