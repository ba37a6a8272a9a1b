import { startServer } from "../tests/helpers/mcp.ts";
const bins = { old: "/tmp/old-agent-shell", new: "/work/main/dist/agent-shell" };
const N = Number(process.argv[2] ?? 200);
const pace = Number(process.argv[3] ?? 0);
const sessions: Record<string, any> = {};
for (const [name, bin] of Object.entries(bins)) for (const mode of ["workspace-write", "off"]) sessions[`${name} ${mode}`] = await startServer({ command: [bin], args: ["--sandbox", mode] });
const times: Record<string, number[]> = {};
const raw: number[] = [];
for (let i = 0; i < N; i++) {
  for (const [k, s] of Object.entries(sessions)) {
    if (pace) await Bun.sleep(pace);
    const t0 = performance.now();
    await s.call("bash", { command: "true" });
    (times[k] ??= []).push(performance.now() - t0);
  }
  if (pace) await Bun.sleep(pace);
  const t0 = performance.now();
  const p = Bun.spawn(["bash", "-c", "true"], { stdout: "pipe", stderr: "pipe" });
  await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  raw.push(performance.now() - t0);
}
const p50 = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log("raw", p50(raw).toFixed(2));
for (const [k, xs] of Object.entries(times)) console.log(k, p50(xs).toFixed(2), (p50(xs) / p50(raw)).toFixed(2) + "x");
for (const s of Object.values(sessions)) await s.close();
