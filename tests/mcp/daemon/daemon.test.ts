import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliSandbox, daemonPid, readLines } from "../../helpers/cli.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect } from "node:net";
import { readDaemonToken } from "../../../src/mcp/daemon/daemon-token.ts";
import { SocketTransport } from "../../../src/mcp/transports/socket-transport.ts";
import { BINARY, startServer } from "../../helpers/mcp.ts";
import { processesMatching, uniqueSleep, waitNoProcess } from "../../helpers/procs.ts";

// These tests wait on real processes and a real daemon; a loaded 2-core machine needs room.
setDefaultTimeout(30_000);

const sb = cliSandbox();
afterAll(() => sb.close());

function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

async function start(...args: string[]): Promise<string> {
  const r = await sb.run(["start", ...args]);
  if (r.code !== 0) throw new Error(`start failed (${r.code}): ${r.stderr}`);
  expect(r.stdout).toMatch(/^bg-\d+\n$/);
  return r.stdout.trim();
}

describe("a CI script with no TTY", () => {
  test("start --ready-port a server, curl it, kill --all: nothing left, ps --json parses", async () => {
    const port = freePort();
    const script = [
      "set -euo pipefail",
      `id=$(${BINARY} start --ready-port ${port} -- python3 -m http.server ${port} --bind 127.0.0.1)`,
      `curl -fsS -o /dev/null http://127.0.0.1:${port}/`,
      `${BINARY} ps --json | python3 -c 'import json, sys; ids = [t["task_id"] for t in json.load(sys.stdin)["tasks"]]; assert sys.argv[1] in ids' "$id"`,
      `${BINARY} kill --all`,
      `echo "ok $id"`,
    ].join("\n");
    const proc = Bun.spawn(["bash", "-c", script], { cwd: sb.cwd, env: sb.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toMatch(/^bg-\d+ killed\nok bg-\d+\n$/);
    expect(await waitNoProcess(`http.server ${port}`)).toEqual([]);
    const after = JSON.parse((await sb.run(["ps", "--json"])).stdout);
    // §13: ps also lists tasks killed in the last 10 minutes; none is left running.
    expect(after.tasks.filter((t: { status: string }) => t.status === "running")).toEqual([]);
  });

  test("--ready-pattern waits for the line; --ready-timeout gives up with 124 and leaves nothing", async () => {
    const marker = uniqueSleep();
    const t0 = performance.now();
    const id = await start("--ready-pattern", "listening on \\d+", "--", `sleep 0.7; echo listening on 42; sleep ${marker}`);
    expect(performance.now() - t0).toBeGreaterThan(600);
    expect((await sb.run(["kill", id])).code).toBe(0);
    const never = await sb.run(["start", "--ready-pattern", "never", "--ready-timeout", "1", "--", `sleep ${marker}`]);
    expect(never.code).toBe(124);
    expect(never.stdout).toBe("");
    expect(await waitNoProcess(marker)).toEqual([]);
  });

  test("a service that exits before it is ready: non-zero exit, its output tail on stderr", async () => {
    const r = await sb.run(["start", "--ready-port", String(freePort()), "--", "echo booting; echo 'fatal: no config' >&2; exit 3"]);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("fatal: no config");
  });
});

describe("two shells share the daemon's tasks", () => {
  test("one starts; the other sees it in ps, follows its logs (each line as it is written) and waits for its exit code", async () => {
    // Each line after the first is written only once the follower has shown the one before it
    // (the test makes the file the task waits for): logs that did not stream would hang the task.
    const id = await start("--", "for i in 1 2 3; do echo \"line $i\"; until [ -e seen-$i ] || [ $i = 3 ]; do sleep 0.05; done; done; exit 3");
    const ps = await sb.run(["ps"]);
    expect(ps.code).toBe(0);
    const row = ps.stdout.split("\n").find((l) => l.startsWith(`${id} `))!;
    expect(row).toMatch(new RegExp(`^${id}\\s+-\\s+running\\s+\\d+\\s+\\S+\\s+\\S+\\s+\\S+\\s+0\\s+-\\s+for i in`)); // §13 columns

    const follow = sb.spawn(["logs", "--follow", id]);
    const lines: string[] = [];
    const reading = readLines(follow.stdout, (line) => {
      lines.push(line);
      writeFileSync(join(sb.cwd, `seen-${lines.length}`), "");
    });
    const wait = await sb.run(["wait", id]);
    expect(wait.code).toBe(3);
    expect(await follow.exited).toBe(0); // --follow ends when the task ends
    await reading;
    expect(lines).toEqual(["line 1", "line 2", "line 3"]);
  });

  test("logs --tail N and --stderr; logs do not move the agent's read cursor", async () => {
    const id = await start("--", "seq 1 10; echo oops >&2");
    await sb.run(["wait", id]);
    // §13: logs merge both streams by default; --stdout is the stream alone.
    expect((await sb.run(["logs", "--stdout", "--tail", "3", id])).stdout).toBe("8\n9\n10\n");
    expect((await sb.run(["logs", "--stdout", id])).stdout).toBe(Array.from({ length: 10 }, (_, i) => `${i + 1}\n`).join(""));
    expect((await sb.run(["logs", "--stderr", id])).stdout).toBe("oops\n");
    const fresh = JSON.parse((await sb.run(["call", "task_output", JSON.stringify({ task_id: id, only_new: true })])).stdout);
    expect(fresh.stdout).toBe(Array.from({ length: 10 }, (_, i) => `${i + 1}\n`).join(""));
  });

  test("wait: 0 when all exit 0, else the first listed failure; 124 on timeout", async () => {
    const ok = await start("--", "true");
    const bad = await start("--", "sleep 0.5; exit 5");
    expect((await sb.run(["wait", ok])).code).toBe(0);
    expect((await sb.run(["wait", ok, bad])).code).toBe(5);
    const marker = uniqueSleep();
    const slow = await start("--", `sleep ${marker}`);
    const t = await sb.run(["wait", "--timeout", "1", slow]);
    expect(t.code).toBe(124);
    expect((await sb.run(["kill", slow])).code).toBe(0);
    const killed = await sb.run(["wait", slow]);
    expect(killed.code).toBe(128 + 15);
    expect(await waitNoProcess(marker)).toEqual([]);
  });

  test("kill of an unknown id exits 1 naming it; of a finished task says so", async () => {
    const r = await sb.run(["kill", "bg-424242"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("bg-424242");
    const done = await start("--", "true");
    await sb.run(["wait", done]);
    const again = await sb.run(["kill", done]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already ended");
  });
});

describe("named services", () => {
  test("start --name is idempotent while the task runs; --restart replaces it", async () => {
    const marker = uniqueSleep();
    const first = await start("--name", "web", "--", `sleep ${marker}`);
    const again = await sb.run(["start", "--name", "web", "--", `sleep ${marker}`]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(first);
    expect(processesMatching(`sleep ${marker}`).filter((p) => p.cmdline === `sleep ${marker}`).length).toBe(1);
    const restarted = await start("--name", "web", "--restart", "--", `sleep ${marker}`);
    expect(restarted).not.toBe(first);
    const all = JSON.parse((await sb.run(["ps", "--all", "--json"])).stdout).tasks as Array<{ task_id: string; status: string; name?: string }>;
    expect(all.find((t) => t.task_id === first)?.status).toBe("killed");
    expect(all.find((t) => t.task_id === restarted)).toMatchObject({ status: "running", name: "web" });
    await sb.run(["kill", restarted]);
    expect(await waitNoProcess(marker)).toEqual([]);
  });

  test("a caution command is refused without a TTY unless --yes", async () => {
    const file = join(sb.cwd, "keep.txt");
    writeFileSync(file, "x");
    const refused = await sb.run(["start", "--", `rm ${file}`]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("--yes");
    expect(existsSync(file)).toBe(true);
    const id = await start("--yes", "--", `rm ${file}`);
    expect((await sb.run(["wait", id])).code).toBe(0);
    expect(existsSync(file)).toBe(false);
  });
});

describe("the daemon", () => {
  test("listens on a 0600 socket in the state dir; status reports it", async () => {
    await sb.run(["ps"]);
    const mode = statSync(join(sb.stateDir, "daemon.sock")).mode & 0o777;
    expect(mode).toBe(0o600);
    const st = await sb.run(["daemon", "status", "--json"]);
    expect(st.code).toBe(0);
    expect(JSON.parse(st.stdout)).toMatchObject({ running: true, pid: daemonPid(sb.stateDir) });
  });

  test("two CLIs starting it at the same moment end with one daemon", async () => {
    for (let round = 0; round < 3; round++) {
      const fresh = cliSandbox();
      try {
        const results = await Promise.all([fresh.run(["ps"]), fresh.run(["ps"]), fresh.run(["daemon", "start"]), fresh.run(["ps", "--json"])]);
        for (const r of results) expect(r.code).toBe(0);
        expect(fresh.daemons()).toEqual([daemonPid(fresh.stateDir)]);
      } finally {
        await fresh.close();
      }
    }
  });

  test("it is the same MCP server: the SDK client over the socket lists the same tools and hears task_finished", async () => {
    await sb.run(["daemon", "start"]);
    const socket = connect(join(sb.stateDir, "daemon.sock"));
    await new Promise((r) => socket.once("connect", r));
    const client = new Client({ name: "daemon-test", version: "0" });
    const notices: Array<Record<string, unknown>> = [];
    let onNotice = () => {};
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      notices.push(n.params.data as Record<string, unknown>);
      onNotice();
    });
    /** Resolves with the first notice about `id` (it may have come already). */
    const noticeFor = (id: string) =>
      new Promise<Record<string, unknown>>((resolve) => {
        onNotice = () => {
          const n = notices.find((x) => x.task_id === id);
          if (n) resolve(n);
        };
        onNotice();
      });
    // The daemon asks every connection for its token first (what a sandboxed command cannot read).
    // The daemon asks for its token first; the client also declares where its calls may run.
    const hello = JSON.stringify({ token: readDaemonToken(join(sb.stateDir, "daemon.sock")), cwd: sb.cwd });
    await client.connect(new SocketTransport(socket, { send: hello }));
    const stdio = await startServer();
    try {
      const viaSocket = (await client.listTools()).tools.map((t) => t.name).sort();
      const viaStdio = (await stdio.client.listTools()).tools.map((t) => t.name).sort();
      expect(viaSocket).toEqual(viaStdio);
      const id = await start("--", "exit 4");
      expect(await noticeFor(id)).toMatchObject({ event: "task_finished", exit_code: 4 });
    } finally {
      await client.close();
      await stdio.close();
    }
  });

  test("the socket answers invalid JSON with -32700 and an oversized line with -32600, then keeps serving (SPEC §14)", async () => {
    await sb.run(["daemon", "start"]);
    const socket = connect(join(sb.stateDir, "daemon.sock"));
    await new Promise((r) => socket.once("connect", r));
    let buffered = "";
    const waiting: Array<(line: string) => void> = [];
    socket.on("data", (chunk) => {
      buffered += chunk.toString();
      for (let nl = buffered.indexOf("\n"); nl >= 0 && waiting.length; nl = buffered.indexOf("\n")) {
        waiting.shift()!(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    });
    const reply = (line: string) =>
      new Promise<any>((resolve) => {
        waiting.push((l) => resolve(JSON.parse(l)));
        socket.write(line);
      });
    socket.write(`${readDaemonToken(join(sb.stateDir, "daemon.sock"))}\n`); // the daemon's token comes first
    try {
      expect(await reply("{not json\n")).toMatchObject({ id: null, error: { code: -32700 } });
      expect(await reply("x".repeat(11 * 1024 * 1024) + "\n")).toMatchObject({ id: null, error: { code: -32600 } });
      expect(await reply(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" }) + "\n")).toMatchObject({ id: 7, result: {} });
    } finally {
      socket.destroy();
    }
  });

  test("daemon stop kills its tasks and leaves no socket; status then says not running (exit 3)", async () => {
    const fresh = cliSandbox();
    try {
      const marker = uniqueSleep();
      const r = await fresh.run(["start", "--", `sleep ${marker} & sleep ${marker}`]);
      expect(r.code).toBe(0);
      const stop = await fresh.run(["daemon", "stop"]);
      expect(stop.code).toBe(0);
      expect(stop.stdout).toContain("stopped");
      expect(await waitNoProcess(marker)).toEqual([]);
      expect(existsSync(join(fresh.stateDir, "daemon.sock"))).toBe(false);
      expect(fresh.daemons()).toEqual([]);
      const st = await fresh.run(["daemon", "status"]);
      expect(st.code).toBe(3);
      expect(st.stdout).toContain("not running");
    } finally {
      await fresh.close();
    }
  });

  test("tasks, their logs and the id counter survive a daemon restart", async () => {
    const fresh = cliSandbox();
    try {
      const id = (await fresh.run(["start", "--", "echo persisted"])).stdout.trim();
      expect((await fresh.run(["wait", id])).code).toBe(0);
      expect((await fresh.run(["daemon", "stop"])).code).toBe(0);
      const ps = JSON.parse((await fresh.run(["ps", "--all", "--json"])).stdout); // starts a new daemon
      expect(ps.tasks.find((t: { task_id: string }) => t.task_id === id)).toMatchObject({ status: "completed", exit_code: 0 });
      expect((await fresh.run(["logs", id])).stdout).toBe("persisted\n");
      const next = (await fresh.run(["start", "--", "true"])).stdout.trim();
      expect(Number(next.slice(3))).toBe(Number(id.slice(3)) + 1);
    } finally {
      await fresh.close();
    }
  });

  test("exits by itself after its idle period with no client and no running task", async () => {
    const fresh = cliSandbox({ AGENT_SHELL_DAEMON_IDLE_SECONDS: "1" });
    try {
      const id = (await fresh.run(["start", "--", "sleep 1.5"])).stdout.trim();
      const pid = daemonPid(fresh.stateDir);
      // Busy while the task runs; idle for 1 s after it ends; then gone.
      expect((await fresh.run(["wait", id])).code).toBe(0);
      expect(fresh.daemons()).toEqual([pid]);
      const deadline = Date.now() + 10_000;
      while (fresh.daemons().length && Date.now() < deadline) await Bun.sleep(50);
      expect(fresh.daemons()).toEqual([]);
      expect(existsSync(join(fresh.stateDir, "daemon.sock"))).toBe(false);
    } finally {
      await fresh.close();
    }
  });

  test("refuses a state dir or socket owned by another user", async () => {
    const base = mkdtempSync(join(tmpdir(), "as-cli-foreign-"));
    try {
      const foreignDir = join(base, "theirs");
      mkdirSync(foreignDir, { mode: 0o700 });
      chownSync(foreignDir, 65534, 65534);
      const r1 = await sb.run(["ps"], { env: { AGENT_SHELL_STATE_DIR: foreignDir } });
      expect(r1.code).not.toBe(0);
      expect(r1.stderr).toContain("belongs to uid 65534");

      const mine = join(base, "mine");
      mkdirSync(mine, { mode: 0o700 });
      const server = createServer(() => {});
      await new Promise<void>((res) => server.listen(join(mine, "daemon.sock"), res));
      chownSync(join(mine, "daemon.sock"), 65534, 65534);
      const r2 = await sb.run(["ps"], { env: { AGENT_SHELL_STATE_DIR: mine } });
      server.close();
      expect(r2.code).not.toBe(0);
      expect(r2.stderr).toContain("belongs to uid 65534");
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe("at a terminal (tmux)", () => {
  /** A tmux server of our own (private socket name), running a plain bash with the sandbox's env. */
  async function withTmux(
    fn: (send: (keys: string) => void, screen: (until: RegExp) => Promise<string>, key: (name: string) => void) => Promise<void>,
  ) {
    const dir = mkdtempSync(join(tmpdir(), "as-cli-tmux-"));
    const tmux = (...args: string[]) => Bun.spawnSync(["tmux", "-S", join(dir, "tmux.sock"), ...args], { stdout: "pipe", stderr: "pipe" });
    const shell = `env -i PATH=${process.env.PATH} HOME=${process.env.HOME} TERM=xterm-256color AGENT_SHELL_STATE_DIR=${sb.stateDir} bash --norc --noprofile`;
    expect(tmux("new-session", "-d", "-s", "t", "-x", "160", "-y", "30", shell).exitCode).toBe(0);
    const send = (keys: string) => void tmux("send-keys", "-t", "t", `clear; ${keys}`, "Enter");
    // The pane with its colours as escape sequences (-e), once it shows what we wait for.
    const screen = async (until: RegExp) => {
      const deadline = Date.now() + 10_000;
      let text = "";
      while (Date.now() < deadline) {
        text = tmux("capture-pane", "-p", "-e", "-t", "t").stdout.toString();
        if (until.test(text)) return text;
        await Bun.sleep(25);
      }
      throw new Error(`the terminal never showed ${until}:\n${text}`);
    };
    try {
      await fn(send, screen, (k) => void tmux("send-keys", "-t", "t", k));
    } finally {
      tmux("kill-server");
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("ps renders an aligned, coloured table; with NO_COLOR=1 there are no escape codes", async () => {
    const marker = uniqueSleep();
    const id = await start("--", `sleep ${marker}`);
    await withTmux(async (send, screen) => {
      send(`${BINARY} ps; echo END-1`);
      const coloured = await screen(/^END-1$/m);
      expect(coloured).toContain("\x1b[32mrunning");
      const plain = coloured.replace(/\x1b\[[0-9;]*m/g, "");
      const header = plain.split("\n").find((l) => l.startsWith("ID"))!;
      const row = plain.split("\n").find((l) => l.startsWith(id))!;
      expect(header).toMatch(/^ID\s+NAME\s+STATUS\s+PID\s+CPU\s+MEM\s+UPTIME\s+RESTARTS\s+EXIT\s+COMMAND$/); // §13 columns
      expect(row.indexOf("running")).toBe(header.indexOf("STATUS"));
      expect(row.indexOf(`sleep ${marker}`)).toBe(header.indexOf("COMMAND"));

      send(`NO_COLOR=1 ${BINARY} ps; echo END-2`);
      const noColour = await screen(/^END-2$/m);
      expect(noColour).toContain(`sleep ${marker}`);
      expect(noColour).not.toContain("\x1b[");
    });
    await sb.run(["kill", id]);
    expect(await waitNoProcess(marker)).toEqual([]);
  });

  test("wait shows a spinner with the elapsed time, then the outcome; no spinner without a TTY", async () => {
    const id = await start("--", "sleep 2.5");
    await withTmux(async (send, screen) => {
      send(`NO_COLOR=1 ${BINARY} wait ${id}; echo "END rc=$?"`);
      const spinning = await screen(new RegExp(`waiting for ${id} \\(\\d+\\.\\ds\\)`));
      expect(spinning).not.toContain("\x1b[");
      const done = await screen(/^END rc=0$/m);
      expect(done).toMatch(new RegExp(`${id} completed \\(exit 0\\)`));
      expect(done).not.toContain("waiting for");
    });
    const piped = await sb.run(["wait", id]);
    expect(piped.stderr).toBe("");
    expect(piped.stdout).toBe("");
  });

  test("run: a spinner while the command is silent, its output, and Ctrl-C kills its group with exit 130", async () => {
    const marker = uniqueSleep();
    await withTmux(async (send, screen, key) => {
      send(`${BINARY} run -- 'sleep 1.5; echo hello; sleep ${marker}'; echo "END rc=$?"`);
      await screen(/running sleep 1\.5; echo hello.* \(\d+\.\ds\)/);
      const out = await screen(/^hello$/m);
      expect(out).not.toMatch(/\(\d+\.\ds\)/); // the spinner is gone once output arrives
      key("C-c");
      await screen(/^\^?C?END rc=130$/m);
    });
    expect(await waitNoProcess(marker)).toEqual([]);
  });

  test("a caution command asks Proceed? [y/N] at a terminal: n refuses, y runs it (run and start)", async () => {
    const file = join(sb.cwd, "ask-me.txt");
    writeFileSync(file, "x");
    let id = "";
    await withTmux(async (send, screen, key) => {
      send(`cd ${sb.cwd} && ${BINARY} run -- rm ask-me.txt; echo "END1 rc=$?"`);
      // The question's first line says what would happen, to what (SPEC §19).
      await screen(/^Deletes files: rm ask-me\.txt \(in \/[\s\S]*Proceed\? \[y\/N\]/m);
      key("n");
      key("Enter");
      await screen(/^END1 rc=125$/m);
      expect(existsSync(file)).toBe(true);
      send(`${BINARY} start -- rm ask-me.txt; echo "END2 rc=$?"`);
      await screen(/^(?![\s\S]*END1 rc)[\s\S]*Deletes files: rm ask-me\.txt \(in \/[\s\S]*Proceed\? \[y\/N\]/); // the new prompt, once the old screen is cleared
      key("y");
      key("Enter");
      const done = await screen(/^END2 rc=0$/m);
      id = done.match(/^(bg-\d+)$/m)?.[1] ?? "";
    });
    expect(id).toMatch(/^bg-\d+$/);
    expect((await sb.run(["wait", id])).code).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  test("Ctrl-C at Proceed? [y/N] answers no: the CLI exits, nothing runs, nothing hangs", async () => {
    const file = join(sb.cwd, "keep-me.txt");
    writeFileSync(file, "x");
    await withTmux(async (send, screen, key) => {
      send(`cd ${sb.cwd} && ${BINARY} run -- rm keep-me.txt; echo "END rc=$?"`);
      await screen(/Proceed\? \[y\/N\]/);
      key("C-c");
      await screen(/^END rc=125$/m);
    });
    expect(existsSync(file)).toBe(true);
  });
});
