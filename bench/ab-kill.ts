import { startServer } from "../tests/helpers/mcp.ts";
const bins = { old: "/tmp/old-agent-shell", new: "/work/main/dist/agent-shell" };
for (let r = 0; r < 2; r++) {
  for (const [name, bin] of Object.entries(bins)) {
    for (const mode of ["workspace-write", "off"]) {
      const s = await startServer({ command: [bin], args: ["--sandbox", mode] });
      const ids: string[] = [];
      let t = performance.now();
      for (let i = 0; i < 100; i++) ids.push((await s.call("bash", { command: "sleep 300", run_in_background: true })).task_id);
      const start = performance.now() - t;
      await Bun.sleep(300);
      t = performance.now();
      await s.call("task_list", {});
      const list = performance.now() - t;
      t = performance.now();
      for (const id of ids) await s.call("kill_shell", { task_id: id });
      const kill = performance.now() - t;
      console.log(name, mode, "start-seq", Math.round(start), "list", list.toFixed(2), "kill-seq", Math.round(kill));
      await s.close();
    }
  }
}
