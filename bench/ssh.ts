/**
 * SSH bench line: 100 sequential remote `true` over the pooled connection vs `ssh host true`
 * the same number of times, against a throwaway local sshd. Run: `bun run bench/ssh.ts`
 * after building (AGENT_SHELL_BINARY selects the binary, as for the tests).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../tests/helpers/mcp.ts";
import { benchSsh } from "../tests/helpers/ssh-bench.ts";
import { startSshd } from "../tests/helpers/sshd.ts";

const sshd = await startSshd();
try {
  const config = join(sshd.dir, "config.toml");
  writeFileSync(config, sshd.hostToml("bench"));
  const server = await startServer({ args: ["--config", config] });
  try {
    const result = await benchSsh(server, sshd, "bench", Number(process.env.SSH_BENCH_CALLS ?? 100));
    console.log(result.line);
  } finally {
    await server.close();
  }
} finally {
  await sshd.stop();
}
