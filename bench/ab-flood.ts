import { startServer } from "../tests/helpers/mcp.ts";
const cmd = process.argv[2] ?? "yes 'agent-shell benchmark: a line of ordinary text output' | head -c 200000000";
const bins = { old: "/tmp/old-agent-shell", new: "/work/main/dist/agent-shell" };
for (let r = 0; r < 3; r++) {
  for (const [name, bin] of Object.entries(bins)) {
    for (const mode of ["workspace-write", "off"]) {
      const s = await startServer({ command: [bin], args: ["--sandbox", mode] });
      const t0 = performance.now();
      const st = await s.call("bash", { command: cmd, run_in_background: true });
      const out = await s.call("task_output", { task_id: st.task_id, wait: true, timeout: 120, max_bytes: 1000 });
      console.log(name, mode, Math.round(performance.now() - t0), "ms", out.stdout_total_bytes);
      await s.close();
    }
  }
}
