import type { McpSession } from "../tests/helpers/mcp.ts";
import type { Sshd } from "../tests/helpers/sshd.ts";

export interface SshBench {
  calls: number;
  /** Median ms per remote `true` through the `bash` tool over the pooled connection. */
  pooledMedianMs: number;
  /** Sum of all `calls` pooled calls, the first (which may open the connection) included. */
  pooledTotalMs: number;
  /** How many `ssh host true` were run (fewer than `calls` when scaled). */
  freshCalls: number;
  /** Median ms per `ssh host true` (a fresh connection each time). */
  freshMedianMs: number;
  /** `calls` × the fresh median: what `calls` fresh connections would cost. */
  freshTotalMs: number;
  line: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * `calls` sequential remote `true` over the pooled connection (bash tool with `host`)
 * against `freshCalls` `ssh host true` in the same run (scaled to `calls` by their median
 * when fewer: each one costs the same handshake and rc files).
 */
export async function benchSsh(server: McpSession, sshd: Sshd, host: string, calls = 100, freshCalls = calls): Promise<SshBench> {
  const pooled: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    const r = await server.call("bash", { command: "true", host });
    pooled.push(performance.now() - t);
    if (r.exit_code !== 0) throw new Error(`remote true failed: ${JSON.stringify(r)}`);
  }
  const fresh: number[] = [];
  for (let i = 0; i < freshCalls; i++) {
    const t = performance.now();
    const p = Bun.spawn(sshd.sshArgv("true"), { stdout: "ignore", stderr: "ignore" });
    if ((await p.exited) !== 0) throw new Error("ssh host true failed");
    fresh.push(performance.now() - t);
  }
  const pooledMedianMs = median(pooled);
  const pooledTotalMs = pooled.reduce((a, b) => a + b, 0);
  const freshMedianMs = median(fresh);
  const freshTotalMs = freshMedianMs * calls;
  const scaled = freshCalls === calls ? "" : ` (${freshCalls} run, scaled to ${calls})`;
  const line =
    `ssh: ${calls} sequential remote \`true\` — pooled connection median ${pooledMedianMs.toFixed(1)} ms/call, total ${pooledTotalMs.toFixed(0)} ms; ` +
    `\`ssh host true\` median ${freshMedianMs.toFixed(1)} ms/call, ${calls}× ${freshTotalMs.toFixed(0)} ms${scaled} ` +
    `(median 1/${(freshMedianMs / pooledMedianMs).toFixed(0)}, total 1/${(freshTotalMs / pooledTotalMs).toFixed(1)})`;
  return { calls, pooledMedianMs, pooledTotalMs, freshCalls, freshMedianMs, freshTotalMs, line };
}
