/**
 * SPEC §11: the OS sandbox around every local command, driven through the compiled binary
 * over MCP. Destructive attempts target a victim directory this file creates under
 * /var/tmp (outside /tmp and outside the allowed paths) and removes at the end.
 * The kernel features are required: a machine without bwrap or user namespaces FAILS here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join, resolve } from "node:path";
import { BINARY, alive, startServer, type McpSession } from "../helpers/mcp.ts";
import { cliSandbox, runCli } from "../helpers/cli.ts";
import { processesMatching, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

/** Forces "no level available" whatever else this kernel has (the namespaces level, with no bwrap). */
const NO_LEVEL = { AGENT_SHELL_SANDBOX_LEVEL: "namespaces", AGENT_SHELL_BWRAP: "/nonexistent/bwrap" };

let victim: string; // outside /tmp and every writable root
let home: string; // the server's HOME: secrets and a tool cache live here
let work: string; // the server's cwd: outside /tmp, so that read-only really excludes it
let s: McpSession; // default mode (workspace-write)

/** Every path and file content under `dir`: what "changes nothing" is checked against. */
function snapshot(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      out.push(`${p}:${st.mode.toString(8)}:${st.isFile() ? readFileSync(p, "utf8") : "dir"}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.join("\n");
}

function resetVictim(): string {
  rmSync(victim, { recursive: true, force: true });
  mkdirSync(join(victim, "sub"), { recursive: true });
  writeFileSync(join(victim, "keep.txt"), "precious\n");
  writeFileSync(join(victim, "sub", "inner.txt"), "inner\n");
  return snapshot(victim);
}

/** Write, delete, rename and mkdir against the victim, in one shell line. */
const ATTACK = (v: string) => `echo x > ${v}/new.txt; rm -f ${v}/keep.txt; mv ${v}/sub ${v}/moved; mkdir ${v}/made; echo pwned >> ${v}/sub/inner.txt; rm -rf ${v}/sub`;

beforeAll(async () => {
  const checkBwrap = Bun.spawnSync(["bwrap", "--unshare-pid", "--ro-bind", "/", "/", "--", "true"], { stdout: "ignore", stderr: "pipe" });
  if (checkBwrap.exitCode !== 0) throw new Error(`the sandbox tests need bubblewrap with pid/mount namespaces: ${checkBwrap.stderr.toString()}`);
  mkdirSync("/var/tmp", { recursive: true });
  victim = realpathSync(mkdtempSync("/var/tmp/as-sandbox-victim-"));
  home = realpathSync(mkdtempSync("/var/tmp/as-sandbox-home-"));
  mkdirSync(join(home, ".ssh"), { mode: 0o700 });
  writeFileSync(join(home, ".ssh", "id_ed25519"), "SECRET-KEY\n", { mode: 0o600 });
  writeFileSync(join(home, ".netrc"), "machine x login y password SECRET\n", { mode: 0o600 });
  mkdirSync(join(home, ".cache"));
  work = realpathSync(mkdtempSync("/var/tmp/as-sandbox-cwd-"));
  s = await startServer({ cwd: work, env: { HOME: home } });
});

afterAll(async () => {
  await s?.close();
  rmSync(victim, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

describe("workspace-write (the default) keeps writes inside the writable roots", () => {
  test("write, delete, rename and mkdir outside the roots fail and change nothing", async () => {
    const before = resetVictim();
    const r = await s.call("bash", { command: ATTACK(victim), confirmed: false });
    // rm and mv are caution commands: confirm, so the command really runs.
    const run = r.needs_confirmation ? await s.call("bash", { command: ATTACK(victim), confirmed: true }) : r;
    expect(run.stderr).toContain("Read-only file system");
    expect(snapshot(victim)).toBe(before);
  });

  test("through a symlink in the cwd, after `cd /`, and from python3: nothing changes", async () => {
    const before = resetVictim();
    symlinkSync(victim, join(s.cwd, "victim-link"));
    const r1 = await s.call("bash", { command: "echo x > victim-link/new.txt; mkdir victim-link/made" });
    expect(r1.exit_code).not.toBe(0);
    const r2 = await s.call("bash", { command: `cd / && cd ${victim.slice(1)} && touch new.txt && echo done` });
    expect(r2.stdout).not.toContain("done");
    const py = `import shutil, os\ntry:\n  shutil.rmtree(${JSON.stringify(victim + "/sub")})\nexcept OSError as e: print("denied", e.errno)\ntry:\n  open(${JSON.stringify(victim + "/py.txt")}, "w")\nexcept OSError as e: print("denied", e.errno)`;
    const r3 = await s.call("bash", { command: `python3 -c '${py}'` });
    expect(r3.stdout).toBe("denied 30\ndenied 30\n");
    expect(snapshot(victim)).toBe(before);
  });

  test("a setsid + nohup grandchild of a background task stays inside", async () => {
    const before = resetVictim();
    const { task_id } = await s.call("bash", {
      command: `setsid nohup bash -c 'touch ${victim}/grandchild; echo "rc=$?" > ${s.cwd}/grandchild.done' >/dev/null 2>&1 & wait`,
      run_in_background: true,
    });
    const r = await s.call("task_output", { task_id, wait: true, timeout: 10 });
    expect(r.status).toBe("completed");
    expect(readFileSync(join(s.cwd, "grandchild.done"), "utf8")).toBe("rc=1\n");
    expect(snapshot(victim)).toBe(before);
  });

  test("a tty task cannot write outside either", async () => {
    const before = resetVictim();
    const r = await s.call("bash", { command: `touch ${victim}/tty.txt; echo "tty=$?"; [ -t 1 ] && echo is-a-tty`, tty: true });
    expect(r.stdout).toContain("tty=1");
    expect(r.stdout).toContain("is-a-tty");
    expect(snapshot(victim)).toBe(before);
  });

  test("writes in the cwd, /tmp and an existing ~/.cache work", async () => {
    const tmpFile = `/tmp/as-sandbox-ok-${process.pid}`;
    const r = await s.call("bash", { command: `echo a > in-cwd.txt && echo b > ${tmpFile} && echo c > ~/.cache/tool.txt && cat in-cwd.txt ${tmpFile} ~/.cache/tool.txt` });
    expect(r.stdout).toBe("a\nb\nc\n");
    expect(r.exit_code).toBe(0);
    expect(readFileSync(join(home, ".cache", "tool.txt"), "utf8")).toBe("c\n");
    rmSync(tmpFile, { force: true });
  });

  test("secrets are unreadable with a permission error while listing their parent works", async () => {
    const r = await s.call("bash", { command: "cat ~/.ssh/id_ed25519; echo rc=$?; cat ~/.netrc; echo rc=$?; ls -a ~ | grep -c ssh" });
    expect(r.stdout).toBe("rc=1\nrc=1\n1\n");
    expect(r.stderr).toContain(".ssh/id_ed25519: Permission denied");
    expect(r.stderr).toContain(".netrc: Permission denied");
    expect(r.stdout + r.stderr).not.toContain("SECRET");
  });

  test(".git/hooks stays read-only under a writable root; .git/config is writable and what it would run is disarmed", async () => {
    mkdirSync(join(s.cwd, ".git", "hooks"), { recursive: true });
    writeFileSync(join(s.cwd, ".git", "config"), "[core]\n");
    // The server computes its policy when it starts: a fresh one sees this repository.
    const t = await startServer({ cwd: s.cwd, env: { HOME: home } });
    try {
      const r = await t.call("bash", { command: "echo evil > .git/hooks/pre-commit; echo '[core] fsmonitor = evil' >> .git/config; echo ok > .git/other" });
      expect(r.stderr).toContain("Read-only file system");
      expect(existsSync(join(s.cwd, ".git", "hooks", "pre-commit"))).toBe(false);
      expect(readFileSync(join(s.cwd, ".git", "config"), "utf8")).toBe("[core]\n[core]\n# disarmed by agent-shell (written by a sandboxed command):  fsmonitor = evil\n");
      expect(r.git_disarmed).toEqual([expect.objectContaining({ repository: s.cwd, key: "core.fsmonitor", value: "evil" })]);
      expect(readFileSync(join(s.cwd, ".git", "other"), "utf8")).toBe("ok\n");
    } finally {
      await t.close();
    }
  });
});

describe("agent-shell's own control surfaces are out of reach", () => {
  test("the state dir cannot be read or written (it lists as empty), and the server cannot be signalled", async () => {
    const entry = readdirSync(s.stateDir)[0]!;
    const command = `ls -A ${s.stateDir} | wc -l; ls ${s.stateDir}/${entry}; echo ls=$?; touch ${s.stateDir}/planted; echo touch=$?; /bin/kill -9 ${s.pid}; echo kill=$?`;
    // kill is a caution command: confirm it, so it really runs.
    const first = await s.call("bash", { command });
    const r = first.needs_confirmation ? await s.call("bash", { command, confirmed: true }) : first;
    expect(r.stdout).toBe("0\nls=2\ntouch=1\nkill=1\n");
    expect(r.stderr).toContain("Permission denied");
    expect(existsSync(join(s.stateDir, "planted"))).toBe(false);
    expect(alive(s.pid)).toBe(true);
  });

  test("`agent-shell start -- touch <victim>` from inside does not reach the outer daemon or the victim", async () => {
    const before = resetVictim();
    const r = await s.call("bash", {
      command: `AGENT_SHELL_STATE_DIR=${s.stateDir} ${BINARY} start -- touch ${victim}/via-daemon; echo start=$?; AGENT_SHELL_STATE_DIR=${s.stateDir} ${BINARY} run -- touch ${victim}/via-run; echo run=$?`,
      timeout_seconds: 60,
    });
    expect(r.stdout).not.toContain("start=0");
    expect(r.stdout).not.toContain("run=0");
    expect(snapshot(victim)).toBe(before);
    expect(existsSync(join(s.stateDir, "daemon.sock"))).toBe(false);
  });

  test("a daemon socket in the state dir cannot be connected to", async () => {
    const sock = join(s.stateDir, "daemon.sock");
    const server = Bun.listen({ unix: sock, socket: { data() {} } });
    try {
      const r = await s.call("bash", { command: `python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(${JSON.stringify(sock)})' 2>&1 | tail -1` });
      expect(r.stdout).toMatch(/PermissionError|FileNotFoundError/);
    } finally {
      server.stop(true);
    }
  });
});

describe("the pid namespace contains everything a command starts", () => {
  test("kill_shell of a background task takes a setsid'd daemon with it", async () => {
    const marker = uniqueSleep(400);
    const { task_id } = await s.call("bash", { command: `setsid sleep ${marker} & sleep ${marker}`, run_in_background: true });
    const deadline = Date.now() + 5000;
    const sleeps = () => processesMatching(`sleep ${marker}`).filter((p) => p.cmdline.startsWith("sleep"));
    while (sleeps().length < 2 && Date.now() < deadline) await Bun.sleep(20);
    expect(sleeps().length).toBe(2);
    const r = await s.call("kill_shell", { task_id });
    expect(r.status).toBe("killed");
    expect(await waitNoProcess(`sleep ${marker}`, 1000)).toEqual([]);
  });

  test("a foreground timeout leaves nothing behind, setsid included", async () => {
    const marker = uniqueSleep(401);
    const r = await s.call("bash", { command: `setsid sleep ${marker} & sleep ${marker}`, timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(await waitNoProcess(`sleep ${marker}`, 1000)).toEqual([]);
  });
});

describe("results say which sandbox applied", () => {
  test("foreground, background, task_output and task_list carry sandbox and sandbox_level", async () => {
    const fg = await s.call("bash", { command: "true" });
    expect(fg).toMatchObject({ sandbox: "workspace-write", sandbox_level: "namespaces" });
    const bg = await s.call("bash", { command: "echo hi", run_in_background: true });
    expect(bg).toMatchObject({ sandbox: "workspace-write", sandbox_level: "namespaces" });
    const out = await s.call("task_output", { task_id: bg.task_id, wait: true, timeout: 5 });
    expect(out).toMatchObject({ sandbox: "workspace-write", sandbox_level: "namespaces" });
    // A list says the server's sandbox once; an entry says its own only where it differs (SPEC §18).
    const ro = await s.call("bash", { command: "true", run_in_background: true, sandbox: "read-only" });
    const list = await s.call("task_list", {});
    expect(list).toMatchObject({ sandbox: "workspace-write", sandbox_level: "namespaces" });
    expect(list.tasks.find((t: any) => t.task_id === bg.task_id)).not.toContainKeys(["sandbox", "sandbox_level"]);
    expect(list.tasks.find((t: any) => t.task_id === ro.task_id)).toMatchObject({ sandbox: "read-only", sandbox_level: "namespaces" });
  });

  test("a task subagent runs sandboxed, its own state dir writable", async () => {
    mkdirSync(join(home, ".claude"), { recursive: true });
    const agent = join(s.cwd, "writer-agent");
    writeFileSync(agent, `#!/bin/sh\necho "$1" > "$HOME/.claude/session.txt" && touch ${victim}/agent 2>/dev/null; echo "victim=$?"\n`, { mode: 0o755 });
    const t = await startServer({ env: { HOME: home }, args: ["--agent-command", `["${agent}", "{prompt}"]`] });
    try {
      resetVictim();
      const before = snapshot(victim);
      const r = await t.call("task", { prompt: "remember me" });
      expect(r).toMatchObject({ status: "completed", sandbox: "workspace-write", sandbox_level: "namespaces" });
      expect(r.stdout).toBe("victim=1\n");
      expect(readFileSync(join(home, ".claude", "session.txt"), "utf8")).toBe("remember me\n");
      expect(snapshot(victim)).toBe(before);
    } finally {
      await t.close();
    }
  });

  test("a failed write outside the roots adds sandbox_denied with the path and a hint", async () => {
    const r = await s.call("bash", { command: `touch ${victim}/denied.txt` });
    expect(r.exit_code).toBe(1);
    expect(r.sandbox_denied.paths).toEqual([`${victim}/denied.txt`]);
    expect(r.sandbox_denied.hint).toContain("sandbox_writable");
    expect(r.sandbox_denied.hint).toContain('sandbox: "off"');
    const ok = await s.call("bash", { command: "false" });
    expect("sandbox_denied" in ok).toBe(false);
  });
});

describe("per-call modes", () => {
  test("a stricter mode (read-only) applies at once: the cwd is not writable", async () => {
    const r = await s.call("bash", { command: "touch ro-attempt.txt", sandbox: "read-only" });
    expect(r.sandbox).toBe("read-only");
    expect(r.exit_code).toBe(1);
    expect(existsSync(join(s.cwd, "ro-attempt.txt"))).toBe(false);
    const tmp = await s.call("bash", { command: `echo t > /tmp/as-ro-${process.pid} && cat /tmp/as-ro-${process.pid}`, sandbox: "read-only" });
    expect(tmp.stdout).toBe("t\n");
    rmSync(`/tmp/as-ro-${process.pid}`, { force: true });
  });

  test("a looser mode (off) asks first, runs once when confirmed, and the confirmation is used up", async () => {
    resetVictim();
    const command = `touch ${victim}/outside.txt`;
    const first = await s.call("bash", { command, sandbox: "off" });
    expect(first.needs_confirmation).toBe(true);
    expect(first.message).toContain("outside the server's sandbox");
    expect(existsSync(join(victim, "outside.txt"))).toBe(false);
    const second = await s.call("bash", { command, sandbox: "off", confirmed: true });
    expect(second).toMatchObject({ exit_code: 0, sandbox: "off" });
    expect(existsSync(join(victim, "outside.txt"))).toBe(true);
    const third = await s.call("bash", { command, sandbox: "off", confirmed: true });
    expect(third.error_code).toBe("BLOCKED");
  });

  test("an unknown mode is INVALID_ARGUMENT naming the field", async () => {
    const r = await s.call("bash", { command: "true", sandbox: "strict" });
    expect(r.error_code).toBe("INVALID_ARGUMENT");
    expect(r.error).toContain("sandbox");
  });
});

describe("server modes", () => {
  test("read-only: the cwd is not writable, /tmp is", async () => {
    const t = await startServer({ cwd: work, args: ["--sandbox", "read-only"] });
    try {
      const r = await t.call("bash", { command: `touch here-ro.txt; echo cwd=$?; touch /tmp/as-ro2-${process.pid}; echo tmp=$?` });
      expect(r.stdout).toBe("cwd=1\ntmp=0\n");
      rmSync(`/tmp/as-ro2-${process.pid}`, { force: true });
      expect(r.sandbox).toBe("read-only");
    } finally {
      await t.close();
    }
  });

  test("off (AGENT_SHELL_SANDBOX): no containment, and results say so", async () => {
    resetVictim();
    const t = await startServer({ env: { AGENT_SHELL_SANDBOX: "off", HOME: home } });
    try {
      const r = await t.call("bash", { command: `touch ${victim}/off.txt && cat ~/.ssh/id_ed25519` });
      expect(r).toMatchObject({ exit_code: 0, stdout: "SECRET-KEY\n", sandbox: "off" });
      expect("sandbox_level" in r).toBe(false);
      expect(existsSync(join(victim, "off.txt"))).toBe(true);
    } finally {
      await t.close();
    }
  });

  test("initialize's instructions describe the sandbox", async () => {
    const instructions = s.client.getInstructions() ?? "";
    expect(instructions).toContain("workspace-write");
    expect(instructions).toContain("namespaces");
  });
});

describe("network", () => {
  /** A non-loopback address of this machine: reachable unsandboxed, not from a network-less sandbox. */
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

  test("sandbox_network = false cuts everything but loopback", async () => {
    expect(external).toBeDefined();
    const listener = Bun.listen({ hostname: "0.0.0.0", port: 0, socket: { data() {}, open(sock) { sock.end(); } } });
    const config = join(s.cwd, "no-network.toml");
    writeFileSync(config, "sandbox_network = false\n");
    const t = await startServer({ args: ["--config", config] });
    const probe = (host: string, port: number) =>
      `python3 -c 'import socket; socket.create_connection((${JSON.stringify(host)}, ${port}), timeout=3); print("connected")' 2>&1 | tail -1`;
    try {
      const outside = await t.call("bash", { command: probe(external!, listener.port) });
      expect(outside.stdout).not.toContain("connected");
      const loop = await t.call("bash", {
        command: `python3 -c 'import socket; l=socket.socket(); l.bind(("127.0.0.1",0)); l.listen(); p=l.getsockname()[1]; c=socket.create_connection(("127.0.0.1",p)); print("loopback ok")'`,
      });
      expect(loop.stdout).toBe("loopback ok\n");
      // The same probe with the network on connects: the failure above is the sandbox's.
      // (network = "on": the default allowlist reaches out only through its proxy, SPEC §21.)
      const onConfig = join(s.cwd, "network-on.toml");
      writeFileSync(onConfig, 'network = "on"\n');
      const withNetwork = await startServer({ args: ["--config", onConfig] });
      try {
        const on = await withNetwork.call("bash", { command: probe(external!, listener.port) });
        expect(on.stdout).toBe("connected\n");
      } finally {
        await withNetwork.close();
      }
    } finally {
      await t.close();
      listener.stop(true);
    }
  });
});

describe("command line", () => {
  test("`sandbox check` reports the kernel's support and each mode's policy", async () => {
    const r = await runCli(["sandbox", "check", "--json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.level).toBe("namespaces");
    expect(report.kernel.bwrap.found).toBe(true);
    expect(report.modes["workspace-write"].writable_roots).toContain("/tmp");
    expect(report.modes["read-only"].writable_roots).toEqual(["/tmp"]);
    const text = await runCli(["sandbox", "check"]);
    expect(text.stdout).toContain("Mode workspace-write:");
  });

  test("`run --sandbox read-only` applies it to a person's command; `--sandbox off` does not", async () => {
    const cwd = realpathSync(mkdtempSync("/var/tmp/as-sandbox-run-"));
    try {
      const ro = await runCli(["run", "--sandbox", "read-only", "--", `touch ${cwd}/x`], { cwd });
      expect(ro.code).toBe(1);
      expect(ro.stderr).toContain("Read-only file system");
      const ww = await runCli(["run", "--", `touch ${cwd}/y`], { cwd });
      expect(ww.code).toBe(0);
      expect(existsSync(join(cwd, "y"))).toBe(true);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  test("bad mode values exit 2 naming the key (flag, env, config file)", async () => {
    const flag = await runCli(["run", "--sandbox", "strict", "--", "true"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("sandbox");
    const env = await runCli(["mcp"], { env: { AGENT_SHELL_SANDBOX: "nope" } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("AGENT_SHELL_SANDBOX");
    const file = join(s.cwd, "bad-sandbox.toml");
    writeFileSync(file, 'sandbox = "loose"\n');
    const cfg = await runCli(["config", "show", "--config", file]);
    expect(cfg.code).toBe(2);
    expect(cfg.stderr).toContain("'sandbox'");
  });

  test("the daemon's tasks are sandboxed: `start -- touch <victim>` changes nothing; `start --sandbox off --yes` may", async () => {
    const before = resetVictim();
    const sb = cliSandbox();
    try {
      const id = (await sb.run(["start", "--", `touch ${victim}/from-daemon; echo rc=$?`])).stdout.trim();
      expect(id).toMatch(/^bg-\d+$/);
      expect((await sb.run(["wait", id, "--timeout", "30"])).code).toBe(0);
      expect((await sb.run(["logs", "--stdout", id])).stdout).toBe("rc=1\n"); // §13: plain `logs` merges stderr in
      const list = JSON.parse((await sb.run(["ps", "--all", "--json"])).stdout);
      expect(JSON.stringify(list)).toContain('"sandbox":"workspace-write"');
      expect(snapshot(victim)).toBe(before);
      // A restarted daemon recovers the task from meta.json, sandbox included.
      expect((await sb.run(["daemon", "stop"])).code).toBe(0);
      const recovered = JSON.parse((await sb.run(["ps", "--all", "--json"])).stdout);
      expect(JSON.stringify(recovered)).toContain('"sandbox":"workspace-write"');
      const off = (await sb.run(["start", "--sandbox", "off", "--yes", "--", `touch ${victim}/from-daemon-off`])).stdout.trim();
      expect((await sb.run(["wait", off, "--timeout", "30"])).code).toBe(0);
      expect(existsSync(join(victim, "from-daemon-off"))).toBe(true);
      const bad = await sb.run(["start", "--sandbox", "loose", "--", "true"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--sandbox");
    } finally {
      await sb.close();
    }
  });

  test("an explicitly requested mode the kernel cannot provide makes `mcp` exit 2 naming what is missing", async () => {
    const r = await runCli(["mcp", "--sandbox", "workspace-write"], { env: NO_LEVEL });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("bwrap");
  });

  test("the default mode falls back loudly: instructions, config show and results say unavailable", async () => {
    const show = await runCli(["config", "show", "--json"], { env: NO_LEVEL });
    expect(JSON.parse(show.stdout).sandbox.value).toContain("unavailable");
    const t = await startServer({ env: NO_LEVEL });
    try {
      expect(t.client.getInstructions()).toContain("unavailable");
      const r = await t.call("bash", { command: "true" });
      expect(r.sandbox).toBe("unavailable");
    } finally {
      await t.close();
    }
  });
});
