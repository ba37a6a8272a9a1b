import { readFileSync } from "node:fs";
import { startServer } from "../tests/helpers/mcp.ts";
// Server CPU per call (utime+stime from /proc, in ms), robust to a busy machine.
const mode = process.argv[2] ?? "off";
const bins: Record<string, string> = { old: "/tmp/old-agent-shell", new: "/work/main/dist/agent-shell" };
const cpu = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" "); return (Number(f[11]) + Number(f[12])) * 10; };
for (const name of ["old", "new", "old", "new"]) {
  const s = await startServer({ command: [bins[name]!], args: ["--sandbox", mode] });
  for (let i = 0; i < 20; i++) await s.call("bash", { command: "true" });
  const c0 = cpu(s.pid);
  const t0 = performance.now();
  for (let i = 0; i < 500; i++) await s.call("bash", { command: "true" });
  const wall = (performance.now() - t0) / 500;
  console.log(mode, name, "server CPU per call", ((cpu(s.pid) - c0) / 500).toFixed(3), "ms; wall", wall.toFixed(2));
  await s.close();
}
