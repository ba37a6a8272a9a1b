import { startServer } from "../tests/helpers/mcp.ts";
// One server at a time, alternating blocks: old vs new binary, same mode.
const mode = process.argv[2] ?? "off";
const bins: Record<string, string> = { old: "/tmp/old-agent-shell", new: "/work/main/dist/agent-shell" };
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const res: Record<string, number[]> = { raw: [], old: [], new: [] };
for (let round = 0; round < 4; round++) {
  for (const name of ["old", "new"]) {
    const s = await startServer({ command: [bins[name]!], args: ["--sandbox", mode], env: process.env.AS_ENV ? JSON.parse(process.env.AS_ENV) : {} });
    for (let i = 0; i < 20; i++) await s.call("bash", { command: "true" });
    for (let i = 0; i < 100; i++) {
      const t0 = performance.now();
      await s.call("bash", { command: "true" });
      res[name]!.push(performance.now() - t0);
    }
    await s.close();
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      const p = Bun.spawn(["bash", "-c", "true"], { stdout: "pipe", stderr: "pipe" });
      await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      res.raw!.push(performance.now() - t0);
    }
  }
}
console.log(mode, Object.entries(res).map(([k, v]) => `${k} ${p50(v).toFixed(2)}`).join("  "), `new/raw ${(p50(res.new!) / p50(res.raw!)).toFixed(2)}x old/raw ${(p50(res.old!) / p50(res.raw!)).toFixed(2)}x`);
