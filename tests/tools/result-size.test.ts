import { expect, test, setDefaultTimeout } from "bun:test";
import { startServer } from "../helpers/mcp.ts";

// Real processes and servers: more than bun's 5 s default.
setDefaultTimeout(60_000);

test("no single result is larger than about 2.5 MB, even for output that JSON-escapes six-fold", async () => {
  const s = await startServer();
  try {
    const r = await s.call("bash", { command: "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2", run_in_background: true });
    // Plain output: shaping would render the NUL bytes away.
    const raw = await s.callRaw("task_output", { task_id: r.task_id, wait: true, max_bytes: 1_000_000, output: "raw" });
    expect(JSON.stringify(raw.structuredContent).length).toBeLessThanOrEqual(2_500_000);
    expect(raw.structuredContent.stdout_truncated).toBe(true);
    expect(raw.structuredContent.stdout).toContain("[… ");
    expect(raw.structuredContent.stdout).toContain(" truncated ");
    expect(raw.structuredContent.stdout_total_bytes).toBe(3_000_000);
    expect(raw.content[0].text).toBe(JSON.stringify(raw.structuredContent));
  } finally {
    await s.close();
  }
});
