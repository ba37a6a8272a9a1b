/**
 * Run INSIDE the far side by bench/far-hosts.ts (`podman exec NAME bun bench/far-local-probe.ts AGENT N`):
 * the same foreground `true` call made locally to the far side's own agent-shell
 * (`mcp --shared`, the same daemon the pipe reaches), through the same SDK client.
 * Also at an agent's pace (100 ms between calls), and task_list (no process started: the MCP path alone). Prints {"times": [ms...], "lists": [ms...]} on stdout.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [agent, n, paced] = [process.argv[2]!, Number(process.argv[3] ?? 40), Number(process.argv[4] ?? 10)];
/** An agent's pace: this long between calls (launchers made ahead are ready again). */
const GAP_MS = 100;
const transport = new StdioClientTransport({ command: agent, args: ["mcp", "--shared", "--cwd", process.env.HOME ?? "/root"], stderr: "ignore" });
const client = new Client({ name: "far-local-probe", version: "0" });
await client.connect(transport);
const timed = async (call: () => Promise<unknown>) => {
  for (let i = 0; i < 3; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  return times;
};
const times = await timed(() => client.callTool({ name: "bash", arguments: { command: "true" } }));
const pacedTimes: number[] = [];
for (let i = 0; i < paced; i++) {
  await Bun.sleep(GAP_MS);
  const t0 = performance.now();
  await client.callTool({ name: "bash", arguments: { command: "true" } });
  pacedTimes.push(performance.now() - t0);
}
const lists = await timed(() => client.callTool({ name: "task_list", arguments: { status: "running" } }));
await client.close();
console.log(JSON.stringify({ times, lists, paced: pacedTimes }));
