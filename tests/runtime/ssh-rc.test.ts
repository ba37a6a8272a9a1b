import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type McpSession, startServer } from "../helpers/mcp.ts";
import { type Sshd, startSshd } from "../helpers/sshd.ts";

/**
 * A remote host whose ~/.bashrc is slow (pyenv/nvm-style init: 0.2 s) and extends PATH.
 * sshd runs the rc files for every exec channel; agent-shell's persistent
 * spawners run them once per connection and start every foreground command in the
 * environment they left, so remote commands keep the rc's PATH without paying its cost.
 */

setDefaultTimeout(60_000);

const RC = [
  "sleep 0.2",
  'export PATH="$HOME/rcbin:$PATH"',
  'export RC_GEN="$(cat "$HOME/rc-gen" 2>/dev/null)"',
  'echo run >> "$HOME/rc-runs"',
  "",
].join("\n");

let sshd: Sshd;
let server: McpSession;

const rcRuns = () => readFileSync(join(sshd.home, "rc-runs"), "utf8").split("\n").length - 1;

beforeAll(async () => {
  sshd = await startSshd({ bashrc: RC });
  mkdirSync(join(sshd.home, "rcbin"));
  const tool = join(sshd.home, "rcbin", "as-rc-tool");
  writeFileSync(tool, '#!/bin/sh\necho "rc tool ok: $1"\n');
  chmodSync(tool, 0o755);
  writeFileSync(join(sshd.home, "rc-gen"), "1\n");
  const config = join(sshd.dir, "config.toml");
  // Room for the 200 kB output test without truncation.
  writeFileSync(config, `max_output_bytes = 1000000\n${sshd.hostToml("slow")}`);
  server = await startServer({ args: ["--config", config] });
});

afterAll(async () => {
  await server?.close();
  await sshd?.stop();
});

describe("a remote host with a slow ~/.bashrc", () => {
  test("a remote command sees the rc's PATH entry: runs its script by bare name", async () => {
    const r = await server.call("bash", { command: "as-rc-tool hello", host: "slow" });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("rc tool ok: hello\n");
    expect(r.exit_code).toBe(0);
  });

  test("background tasks see it too (started by the control shell, which ran the rc once)", async () => {
    const bg = await server.call("bash", { command: "as-rc-tool bg", host: "slow", run_in_background: true });
    const out = await server.call("task_output", { task_id: bg.task_id, wait: true, timeout: 30 });
    expect(out.stdout).toBe("rc tool ok: bg\n");
    expect(out.exit_code).toBe(0);
  });

  test("100 sequential remote `true` over the pooled connection run the rc no more (what they cost: bench/ssh.ts)", async () => {
    const before = rcRuns();
    for (let i = 0; i < 100; i++) expect((await server.call("bash", { command: "true", host: "slow" })).exit_code).toBe(0);
    expect(rcRuns() - before).toBe(0);
  }, 120_000);

  test("the environment is captured once per connection, and again after a reconnection", async () => {
    const first = await server.call("bash", { command: 'echo "gen=$RC_GEN"', host: "slow" });
    expect(first.stdout).toBe("gen=1\n");
    writeFileSync(join(sshd.home, "rc-gen"), "2\n");
    // Same connection: the rc is not run again, so the command still sees what it left.
    const same = await server.call("bash", { command: 'echo "gen=$RC_GEN"', host: "slow" });
    expect(same.stdout).toBe("gen=1\n");
    expect(await sshd.dropConnections()).toBeGreaterThan(0);
    const after = await server.call("bash", { command: 'echo "gen=$RC_GEN"; as-rc-tool again', host: "slow" });
    expect(after.error).toBeUndefined();
    expect(after.stdout).toBe("gen=2\nrc tool ok: again\n");
  });
});

describe("foreground commands on a spawner keep their contracts", () => {
  test("exit by a signal and exit with 128+N are told apart", async () => {
    const killed = await server.call("bash", { command: "exec python3 -c 'import os; os.abort()'", host: "slow" });
    expect(killed.signal).toBe("SIGABRT");
    const exited = await server.call("bash", { command: "exit 137", host: "slow" });
    expect(exited.signal).toBeUndefined();
    expect(exited.exit_code).toBe(137);
    const segv = await server.call("bash", { command: "python3 -c 'import os; os.abort()'; exit 0", host: "slow" });
    // A child's death by a signal is its bash's business: here bash exits 0 by itself.
    expect(segv.signal).toBeUndefined();
    expect(segv.exit_code).toBe(0);
  });

  test("output without a final newline, on both streams, and what looks like a marker", async () => {
    const r = await server.call("bash", { command: "printf 'out'; printf 'err' >&2; printf '__as'; exit 4", host: "slow" });
    expect(r.stdout).toBe("out__as");
    expect(r.stderr).toBe("err");
    expect(r.exit_code).toBe(4);
  });

  test("output still written by the group after the leader exits is kept (end-of-file, as on a channel)", async () => {
    const r = await server.call("bash", { command: "(sleep 0.1; echo late; echo late-err >&2) & echo early", host: "slow" });
    expect(r.stdout).toBe("early\nlate\n");
    expect(r.stderr).toBe("late-err\n");
  });

  test("200 kB of output on both streams arrive whole", async () => {
    const r = await server.call("bash", {
      command: "head -c 200000 /dev/zero | tr '\\0' o; head -c 100000 /dev/zero | tr '\\0' e >&2",
      host: "slow",
    });
    expect(r.stdout).toBe("o".repeat(200_000));
    expect(r.stderr).toBe("e".repeat(100_000));
  });

  test("concurrent commands, more than the spawners, all get their own output", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => server.call("bash", { command: `echo out-${i}; echo err-${i} >&2; exit ${i}`, host: "slow" })),
    );
    results.forEach((r, i) => {
      expect(r.stdout).toBe(`out-${i}\n`);
      expect(r.stderr).toBe(`err-${i}\n`);
      expect(r.exit_code).toBe(i);
    });
  });
});
