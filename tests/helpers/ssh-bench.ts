import type { McpSession } from "./mcp.ts";
import type { Sshd } from "./sshd.ts";

export interface SshBench {
  calls: number;
  /** Median ms per remote `true` through the `bash` tool over the pooled connection. */
  pooledMedianMs: number;
  /** Median ms per `ssh host true` (a fresh connection each time). */
  freshMedianMs: number;
  line: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * `calls` sequential remote `true` over the pooled connection (bash tool with `host`)
 * against the same number of `ssh host true` in the same run.
 */
export async function benchSsh(server: McpSession, sshd: Sshd, host: string, calls = 100): Promise<SshBench> {
  const pooled: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    const r = await server.call("bash", { command: "true", host });
    pooled.push(performance.now() - t);
    if (r.exit_code !== 0) throw new Error(`remote true failed: ${JSON.stringify(r)}`);
  }
  const fresh: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    const p = Bun.spawn(sshd.sshArgv("true"), { stdout: "ignore", stderr: "ignore" });
    if ((await p.exited) !== 0) throw new Error("ssh host true failed");
    fresh.push(performance.now() - t);
  }
  const pooledMedianMs = median(pooled);
  const freshMedianMs = median(fresh);
  const line =
    `ssh: ${calls} sequential remote \`true\` — pooled connection median ${pooledMedianMs.toFixed(1)} ms/call, ` +
    `\`ssh host true\` median ${freshMedianMs.toFixed(1)} ms/call (1/${(freshMedianMs / pooledMedianMs).toFixed(0)})`;
  return { calls, pooledMedianMs, freshMedianMs, line };
}
