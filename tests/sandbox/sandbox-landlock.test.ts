/**
 * SPEC §11, the Landlock level: where user namespaces are refused, the spawn helper restricts
 * each command with the policy's Landlock ruleset between fork and exec.
 * The level is forced here (AGENT_SHELL_SANDBOX_LEVEL=landlock) since this machine also has
 * namespaces. Landlock is required: a kernel without it FAILS this file.
 * Destructive attempts target a victim directory created under /var/tmp (outside /tmp and
 * the allowed paths) and removed at the end.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, alive, startServer, type McpSession } from "../helpers/mcp.ts";
import { processesMatching, uniqueSleep, waitForExec, waitNoProcess } from "../helpers/procs.ts";
import { FS, READ_RIGHTS } from "../../src/sandbox/landlock/abi.ts";
import { landlockRuleset } from "../../src/sandbox/landlock/ruleset.ts";
import { landlockRules } from "../../src/sandbox/landlock/rules.ts";
import { probeLandlock } from "../../src/sandbox/landlock/index.ts";

const LANDLOCK = { AGENT_SHELL_SANDBOX_LEVEL: "landlock" };
let base: string; // everything this file creates lives under here (outside /tmp)
let victim: string;
let home: string;
let work: string;
let state: string;
let s: McpSession;

const listing = (dir: string) => readdirSync(dir).sort().join(",");

beforeAll(async () => {
  const probe = probeLandlock();
  if (!("abi" in probe)) throw new Error(`these tests need Landlock: ${probe.error}`);
  mkdirSync("/var/tmp", { recursive: true });
  base = realpathSync(mkdtempSync("/var/tmp/as-landlock-"));
  for (const d of ["victim", "home", "cwd", "state"]) mkdirSync(join(base, d), { mode: 0o700 });
  [victim, home, work, state] = ["victim", "home", "cwd", "state"].map((d) => join(base, d));
  writeFileSync(join(victim, "keep.txt"), "precious\n");
  mkdirSync(join(home, ".ssh"), { mode: 0o700 });
  writeFileSync(join(home, ".ssh", "id_ed25519"), "SECRET-KEY\n", { mode: 0o600 });
  s = await startServer({ cwd: work, stateDir: state, env: { ...LANDLOCK, HOME: home } });
});

afterAll(async () => {
  await s?.close();
  Bun.spawnSync([BINARY, "daemon", "stop"], { env: { ...process.env, AGENT_SHELL_STATE_DIR: state }, stdout: "ignore", stderr: "ignore" });
  rmSync(base, { recursive: true, force: true });
});

describe("the Landlock level", () => {
  test("results say sandbox_level landlock", async () => {
    const r = await s.call("bash", { command: "true" });
    expect(r).toMatchObject({ exit_code: 0, sandbox: "workspace-write", sandbox_level: "landlock" });
  });

  test("writes, deletes, renames and mkdir outside the roots fail with EACCES and change nothing, from bash, a setsid grandchild and python3", async () => {
    const before = listing(victim);
    const command =
      `echo x > ${victim}/new.txt; rm -f ${victim}/keep.txt; mv ${victim}/keep.txt ${victim}/moved.txt; mkdir ${victim}/made; ` +
      `setsid bash -c 'touch ${victim}/from-setsid' ; python3 -c 'open("${victim}/from-python", "w")'`;
    const first = await s.call("bash", { command });
    const r = first.needs_confirmation ? await s.call("bash", { command, confirmed: true }) : first;
    expect(r.stderr).toContain("Permission denied");
    expect(r.stderr).not.toContain("Read-only file system");
    expect(listing(victim)).toBe(before);
  });

  test("writes in the cwd and /tmp work", async () => {
    const tmpFile = `/tmp/as-landlock-${process.pid}-${Date.now()}`;
    try {
      const r = await s.call("bash", { command: `echo made > here.txt && echo t > ${tmpFile} && cat here.txt ${tmpFile}` });
      expect(r.stdout).toBe("made\nt\n");
      expect(existsSync(join(work, "here.txt"))).toBe(true);
    } finally {
      rmSync(tmpFile, { force: true });
    }
  });

  test("a secret is unreadable with a permission error while its home lists", async () => {
    const r = await s.call("bash", { command: "ls -a ~; cat ~/.ssh/id_ed25519" });
    expect(r.stdout).toContain(".ssh");
    expect(r.stdout).not.toContain("SECRET");
    expect(r.stderr).toContain("Permission denied");
  });

  test("the server cannot be signalled from inside (signal scope)", async () => {
    const command = `kill -TERM ${s.pid}; echo rc=$?`;
    // kill is a caution command: confirm it, so it really runs.
    const first = await s.call("bash", { command });
    const r = first.needs_confirmation ? await s.call("bash", { command, confirmed: true }) : first;
    expect(r.stdout).toBe("rc=1\n");
    expect(r.stderr).toContain("Operation not permitted");
    expect(alive(s.pid)).toBe(true);
  });

  test("the state dir's files can be neither read nor written (names may be listed)", async () => {
    writeFileSync(join(state, "probe.txt"), "STATE-SECRET\n", { mode: 0o600 });
    const r = await s.call("bash", { command: `cat ${state}/probe.txt; echo x >> ${state}/probe.txt; touch ${state}/planted` });
    expect(r.stdout).not.toContain("STATE-SECRET");
    expect(r.stderr).toContain("Permission denied");
    expect(existsSync(join(state, "planted"))).toBe(false);
  });

  test("a command cannot reach a running daemon to get work run outside its sandbox", async () => {
    const daemonState = state; // the daemon shares the server's state dir, as both do by default
    const env = { ...process.env, AGENT_SHELL_STATE_DIR: daemonState };
    expect(Bun.spawnSync([BINARY, "daemon", "start"], { env, stdout: "ignore", stderr: "pipe" }).exitCode).toBe(0);
    const before = listing(victim);
    const r = await s.call("bash", {
      command: `AGENT_SHELL_STATE_DIR=${daemonState} ${BINARY} start --sandbox off --yes -- touch ${victim}/via-daemon; echo start=$?`,
      timeout_seconds: 60,
    });
    expect(r.stdout).not.toContain("start=0");
    expect(listing(victim)).toBe(before);
    // The same line outside the sandbox does reach the daemon: what stopped it above was the sandbox.
    const outside = Bun.spawnSync([BINARY, "start", "--sandbox", "off", "--yes", "--", "true"], { env, cwd: work, stdout: "pipe", stderr: "pipe" });
    expect(outside.exitCode).toBe(0);
  });

  test("with the network cut, TCP to a listener on loopback fails (Landlock cannot tell loopback apart)", async () => {
    const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {}, open(sock) { sock.end(); } } });
    const config = join(work, "no-network.toml");
    writeFileSync(config, "sandbox_network = false\n");
    const t = await startServer({ cwd: work, args: ["--config", config], env: LANDLOCK });
    const probe = `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${listener.port}), timeout=3); print("connected")' 2>&1 | tail -1`;
    try {
      const cut = await t.call("bash", { command: probe });
      expect(cut.stdout).toContain("PermissionError");
      // network = "on": the default allowlist lets commands connect only to its proxy (SPEC §21).
      const onConfig = join(work, "network-on.toml");
      writeFileSync(onConfig, 'network = "on"\n');
      const withNetwork = await startServer({ cwd: work, args: ["--config", onConfig], env: LANDLOCK });
      try {
        const on = await withNetwork.call("bash", { command: probe });
        expect(on.stdout).toBe("connected\n");
      } finally {
        await withNetwork.close();
      }
    } finally {
      await t.close();
      listener.stop(true);
    }
  });

  test("exit statuses are the command's own (no signal mapping) and a signal is reported as one", async () => {
    expect(await s.call("bash", { command: "exit 130" })).toMatchObject({ exit_code: 130 });
    const first = await s.call("bash", { command: "kill -KILL $$" });
    expect(first.needs_confirmation).toBe(true);
    expect(await s.call("bash", { command: "kill -KILL $$", confirmed: true })).toMatchObject({ exit_code: -1, signal: "SIGKILL" });
  });

  test("kill_shell of a background task ends its group", async () => {
    const marker = uniqueSleep(410);
    const { task_id } = await s.call("bash", { command: `sleep ${marker}`, run_in_background: true });
    await waitForExec(`sleep ${marker}`);
    expect((await s.call("kill_shell", { task_id })).status).toBe("killed");
    expect(await waitNoProcess(`sleep ${marker}`, 1000)).toEqual([]);
  });

  /** The built helper run directly: its request and ruleset come from files given as fds 3 and 4. */
  function helper(ruleset: string, argv: string[]) {
    const dir = mkdtempSync(join(base, "helper-"));
    writeFileSync(join(dir, "request"), [work, "null", String(argv.length), ...argv, "PATH=/usr/bin:/bin"].map((f) => `${f}\0`).join(""));
    writeFileSync(join(dir, "ruleset"), ruleset);
    const fds = [openSync(join(dir, "request"), "r"), openSync(join(dir, "ruleset"), "r")];
    try {
      return Bun.spawnSync(["build/agent-shell-helper", "start", "--request", "3", "--landlock", "4", "--drop-caps"], { stdio: ["ignore", "pipe", "pipe", ...fds] } as never);
    } finally {
      for (const fd of fds) closeSync(fd);
    }
  }

  test("an unreadable ruleset makes the helper exit 125 without running the command", () => {
    const marker = join(base, "ran");
    const p = helper("not-a-ruleset\0", ["touch", marker]);
    expect(p.exitCode).toBe(125);
    expect(p.stderr.toString()).toContain("landlock");
    expect(existsSync(marker)).toBe(false);
  });

  test("the helper runs a command restricted by exactly the ruleset it is given", () => {
    const policy = { mode: "workspace-write" as const, writableRoots: [work], readOnlyUnderWritable: [], denyRead: [], network: true, loopback: true, allowUnixSockets: [], workspaceRoots: [] };
    const p = helper(landlockRuleset(policy), ["bash", "-c", `touch ${work}/ok && touch ${victim}/no`]);
    expect(p.exitCode).toBe(1);
    expect(existsSync(join(work, "ok"))).toBe(true);
    expect(existsSync(join(victim, "no"))).toBe(false);
  });
});

describe("rules (pure): readable except the denied paths", () => {
  test("ancestors of a denied path may only be listed; its siblings are fully readable; a denied folder may only be listed", () => {
    const tree = join(base, "tree");
    mkdirSync(join(tree, "home", ".ssh"), { recursive: true });
    mkdirSync(join(tree, "home", "proj"));
    writeFileSync(join(tree, "home", ".bashrc"), "");
    const denied = join(tree, "home", ".ssh");
    const rules = landlockRules({ mode: "read-only", writableRoots: [], readOnlyUnderWritable: [], denyRead: [denied], network: true, loopback: true, allowUnixSockets: [], workspaceRoots: [] }, (1n << 16n) - 1n);
    const rightsOf = (p: string) => rules.filter((r) => r.path === p).map((r) => r.rights);
    expect(rightsOf("/")).toEqual([FS.READ_DIR]);
    expect(rightsOf(join(tree, "home"))).toEqual([FS.READ_DIR]);
    expect(rightsOf(join(tree, "home", "proj"))).toEqual([READ_RIGHTS | FS.IOCTL_DEV]);
    expect(rightsOf(join(tree, "home", ".bashrc"))[0]! & FS.READ_FILE).toBe(FS.READ_FILE);
    expect(rightsOf(denied)).toEqual([FS.READ_DIR]);
    expect(rules.some((r) => denied.startsWith(r.path + "/") && r.rights & FS.READ_FILE)).toBe(false);
  });

  test("a denied path inside a writable root is not expanded (documented: the namespaces level hides it)", () => {
    const root = join(base, "wroot");
    mkdirSync(join(root, "secret"), { recursive: true });
    const rules = landlockRules({ mode: "workspace-write", writableRoots: [root], readOnlyUnderWritable: [], denyRead: [join(root, "secret")], network: true, loopback: true, allowUnixSockets: [], workspaceRoots: [] }, (1n << 16n) - 1n);
    expect(rules.find((r) => r.path === "/")!.rights & FS.READ_FILE).toBe(FS.READ_FILE);
  });
});
