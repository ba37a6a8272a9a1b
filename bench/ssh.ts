/**
 * SSH bench lines: 100 sequential remote `true` over the pooled connection vs `ssh host true`,
 * against throwaway local sshds: one whose remote ~/.bashrc is lean, one whose ~/.bashrc
 * takes 200 ms (pyenv/nvm-style init), where `ssh host true` is run fewer times
 * and scaled (each one pays the same handshake and rc). Run: `bun run bench/ssh.ts` after
 * building (AGENT_SHELL_BINARY selects the binary, as for the tests).
 * SSH_BENCH_CALLS (default 100) and SSH_BENCH_FRESH (default 20) set the counts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../tests/helpers/mcp.ts";
import { benchSsh } from "./ssh-bench.ts";
import { startSshd } from "../tests/helpers/sshd.ts";

const calls = Number(process.env.SSH_BENCH_CALLS ?? 100);
const fresh = Number(process.env.SSH_BENCH_FRESH ?? 20);

const cases = [
  { label: "lean ~/.bashrc", bashrc: undefined },
  { label: "200 ms ~/.bashrc", bashrc: 'sleep 0.2\nexport PATH="$HOME/bin:$PATH"\n' },
];

for (const c of cases) {
  const sshd = await startSshd({ bashrc: c.bashrc });
  try {
    const config = join(sshd.dir, "config.toml");
    writeFileSync(config, sshd.hostToml("bench"));
    const server = await startServer({ args: ["--config", config] });
    try {
      const result = await benchSsh(server, sshd, "bench", calls, Math.min(fresh, calls));
      console.log(`${c.label}: ${result.line}`);
      console.log(
        `${c.label}: remote \`true\` median ${result.pooledMedianMs.toFixed(1)} ms vs \`ssh host true\` ${result.freshMedianMs.toFixed(1)} ms: ` +
          `ratio ${(result.pooledMedianMs / result.freshMedianMs).toFixed(3)} (target ≤ 0.2)`,
      );
    } finally {
      await server.close();
    }
  } finally {
    await sshd.stop();
  }
}
