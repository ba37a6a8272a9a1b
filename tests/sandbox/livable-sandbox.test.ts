/**
 * SPEC §25 "A sandbox a developer lives in", through the compiled binary over MCP: every
 * refusal names its kind with the right hint, sudo/su are refused at once, walking the home
 * works, tool homes and sandbox_writable entries are made when missing (or named), and the
 * Landlock level's notes come once per connection.
 * Everything lives under a mkdtemp in /var/tmp (outside /tmp, so outside the writable roots).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, startServer, type McpSession } from "../helpers/mcp.ts";
import { runCli } from "../helpers/cli.ts";
import { processesMatching } from "../helpers/procs.ts";

const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
let base: string;
let home: string; // the server's HOME: a .npmrc, a .ssh, no ~/.cache and no ~/go
let work: string;
let s: McpSession;

beforeAll(async () => {
  base = realpathSync(mkdtempSync("/var/tmp/as-livable-"));
  [home, work] = ["home", "work"].map((d) => join(base, d));
  for (const d of [home, work]) mkdirSync(d);
  writeFileSync(join(home, ".npmrc"), "//registry.example/:_authToken=NPM-SECRET\n", { mode: 0o600 });
  mkdirSync(join(home, ".ssh"), { mode: 0o700 });
  writeFileSync(join(home, ".ssh", "id_ed25519"), "SSH-SECRET\n", { mode: 0o600 });
  s = await startServer({ cwd: work, env: { HOME: home } });
});

afterAll(async () => {
  await s?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("every refusal names itself", () => {
  test("reading a secret: kind hidden, a hint that never suggests sandbox_writable", async () => {
    const r = await s.call("bash", { command: "cat ~/.npmrc" });
    expect(r.exit_code).not.toBe(0);
    expect(r.stdout).not.toContain("NPM-SECRET");
    expect(r.sandbox_denied).toMatchObject({ kind: "hidden", paths: [join(home, ".npmrc")] });
    expect(r.sandbox_denied.hint).not.toContain("sandbox_writable");
    expect(r.sandbox_denied.hint).toContain('sandbox: "off"');
  });

  test("git config --global: kind write naming ~/.gitconfig", async () => {
    const r = await s.call("bash", { command: "git config --global user.name x" });
    expect(r.exit_code).not.toBe(0);
    expect(r.sandbox_denied.kind).toBe("write");
    expect(r.sandbox_denied.paths).toContain(join(home, ".gitconfig"));
    expect(r.sandbox_denied.hint).toContain("sandbox_writable");
    expect(existsSync(join(home, ".gitconfig"))).toBe(false);
  });

  test("a unix socket a process outside listens on: kind socket naming sandbox_allow_unix_sockets", async () => {
    const path = join(base, "outside.sock");
    let connections = 0;
    const listener = Bun.listen({ unix: path, socket: { open: () => void connections++, data() {} } });
    try {
      const command = `${PYTHON} -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${path}'); s.sendall(b'hi')"`;
      const r = await s.call("bash", { command });
      expect(r.exit_code).not.toBe(0);
      expect(r.sandbox_denied).toMatchObject({ kind: "socket", paths: [path] });
      expect(r.sandbox_denied.hint).toContain("sandbox_allow_unix_sockets");
      expect(connections).toBe(0);
    } finally {
      listener.stop(true);
    }
  });

  test("sudo and su are refused at once, with the reason, never asked about first", async () => {
    for (const command of ["sudo -n true", "env LC_ALL=C su -c true"]) {
      const r = await s.call("bash", { command });
      expect(r.needs_confirmation).toBeUndefined();
      expect(r.error_code).toBe("BLOCKED");
      expect(r.error).toContain("Ask the user to run this command themselves");
      expect(r.context.sandbox_denied).toMatchObject({ kind: "privilege", paths: [] });
    }
    // Outside the sandbox sudo is still a caution command, asked about as before.
    const off = await s.call("bash", { command: "sudo -n true", sandbox: "off" });
    expect(off.needs_confirmation).toBe(true);
  });

  test("agent-shell's daemon verbs inside a command: kind daemon, pointing at bash {service}", async () => {
    const r = await s.call("bash", { command: `${BINARY} call bash '{"command":"true"}'` });
    expect(r.exit_code).not.toBe(0);
    expect(r.sandbox_denied.kind).toBe("daemon");
    expect(r.sandbox_denied.hint).toContain("service");
    expect(processesMatching(`${BINARY} daemon`)).toEqual([]);
  });

  test("a host pid: kind pid", async () => {
    const r = await s.call("bash", { command: `bash -c 'kill -0 ${process.pid}'` });
    expect(r.exit_code).not.toBe(0);
    expect(r.sandbox_denied.kind).toBe("pid");
    expect(r.sandbox_denied.hint).toContain("kill_shell");
  });
});

describe("walking the home folder", () => {
  test("find ~, du ~ and ls -R ~ exit 0: hidden folders look empty, their files stay unreadable", async () => {
    const r = await s.call("bash", { command: "find ~ >/dev/null && du ~ >/dev/null && ls -R ~ >/dev/null && echo walked; ls -A ~/.ssh | wc -l; cat ~/.ssh/id_ed25519" });
    expect(r.stdout).toBe("walked\n0\n");
    expect(r.stderr).toContain(".ssh/id_ed25519: Permission denied");
    expect(r.sandbox_denied.kind).toBe("hidden");
  });
});

describe("tool homes and sandbox_writable entries", () => {
  test("with no ~/.cache and no ~/go, `mkdir -p ~/go/pkg && touch ~/.cache/x` works", async () => {
    const r = await s.call("bash", { command: "mkdir -p ~/go/pkg && touch ~/.cache/x && echo ok" });
    expect(r).toMatchObject({ exit_code: 0, stdout: "ok\n" });
    expect(existsSync(join(home, "go", "pkg"))).toBe(true);
    expect(existsSync(join(home, ".cache", "x"))).toBe(true);
  });

  test("made for the home's owner when a root server serves another user's HOME", async () => {
    if (process.getuid?.() !== 0) return; // only root can serve another user's home
    const other = join(base, "other-home");
    mkdirSync(other);
    chownSync(other, 65534, 65534);
    const r = await runCli(["sandbox", "check", "--json"], { cwd: work, env: { HOME: other } });
    expect(r.code).toBe(0);
    for (const dir of [".cache", "go", ".cargo", ".cargo/registry", ".m2/repository", ".gradle/caches", ".npm"]) {
      expect({ dir, uid: statSync(join(other, dir)).uid }).toEqual({ dir, uid: 65534 });
    }
  });

  test("a missing sandbox_writable entry is made; one that cannot be is named in config show, sandbox check, instructions and the first result only", async () => {
    const made = join(base, "later", "deep");
    const blocker = join(base, "a-file");
    writeFileSync(blocker, "");
    const impossible = join(blocker, "sub");
    const config = join(base, "config.toml");
    writeFileSync(config, `sandbox_writable = [${JSON.stringify(made)}, ${JSON.stringify(impossible)}]\n`);
    const show = await runCli(["config", "show", "--config", config, "--json"], { cwd: work, env: { HOME: home } });
    expect(JSON.parse(show.stdout).sandbox_writable_not_in_force.value.join("\n")).toContain(impossible);
    const check = await runCli(["sandbox", "check", "--config", config, "--json"], { cwd: work, env: { HOME: home } });
    expect(JSON.parse(check.stdout).sandbox_writable_not_in_force.join("\n")).toContain(impossible);
    const t = await startServer({ cwd: work, env: { HOME: home }, args: ["--config", config] });
    try {
      expect(t.client.getInstructions()).toContain(impossible);
      const first = await t.call("bash", { command: `touch ${made}/x && echo ok` });
      expect(first).toMatchObject({ exit_code: 0, stdout: "ok\n" });
      expect(first.sandbox_notes.join("\n")).toContain(impossible);
      const second = await t.call("bash", { command: "true" });
      expect(second.sandbox_notes).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});

describe("the Landlock level's notes", () => {
  test("stated in the instructions and the first result, not on the second", async () => {
    const t = await startServer({ cwd: work, env: { HOME: home, AGENT_SHELL_SANDBOX_LEVEL: "landlock" } });
    try {
      expect(t.client.getInstructions()).toContain("chmod");
      const first = await t.call("bash", { command: "true" });
      expect(first.sandbox_level).toBe("landlock");
      expect(first.sandbox_notes.join("\n")).toContain("chmod");
      const second = await t.call("bash", { command: "true" });
      expect(second.sandbox_level).toBe("landlock");
      expect(second.sandbox_notes).toBeUndefined();
      // Walking the home works at this level too.
      const walk = await t.call("bash", { command: "find ~ >/dev/null && echo walked; cat ~/.ssh/id_ed25519" });
      expect(walk.stdout).toBe("walked\n");
      expect(walk.stderr).toContain("Permission denied");
    } finally {
      await t.close();
    }
  });
});
