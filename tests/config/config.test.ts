import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/cli.ts";

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "as-config-")));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Env that points XDG dirs into the temp dir, so no user config is read. */
const isolated = (extra: Record<string, string> = {}) => ({ XDG_CONFIG_HOME: join(dir, "xdg"), XDG_STATE_HOME: join(dir, "state"), ...extra });

async function show(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(["config", "show", "--json", ...args], { env: isolated(env) });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Record<string, { value: unknown; source: string }>;
}

describe("configuration precedence: flags > env > file > defaults", () => {
  test("defaults when nothing is set", async () => {
    const c = await show([]);
    expect(c.timeout_seconds).toEqual({ value: 120, source: "default" });
    expect(c.task_timeout_seconds).toEqual({ value: 1800, source: "default" });
    expect(c.task_ttl_seconds).toEqual({ value: 1800, source: "default" });
    expect(c.max_output_bytes.value).toBe(8000);
    expect(c.kill_grace_seconds.value).toBe(2);
  });

  test("file beats default, env beats file, flag beats env — for the same key", async () => {
    const file = join(dir, "c.toml");
    writeFileSync(file, "timeout_seconds = 11\ntask_ttl_seconds = 7\n");
    let c = await show(["--config", file]);
    expect(c.timeout_seconds).toEqual({ value: 11, source: `file:${file}` });
    c = await show(["--config", file], { AGENT_SHELL_TIMEOUT_SECONDS: "22" });
    expect(c.timeout_seconds).toEqual({ value: 22, source: "env:AGENT_SHELL_TIMEOUT_SECONDS" });
    expect(c.task_ttl_seconds).toEqual({ value: 7, source: `file:${file}` });
    c = await show(["--config", file, "--timeout", "33"], { AGENT_SHELL_TIMEOUT_SECONDS: "22" });
    expect(c.timeout_seconds).toEqual({ value: 33, source: "flag" });
  });

  test("who confirms (SPEC §19): confirm_by and confirm_timeout_seconds, with their sources; bad values name the key", async () => {
    let c = await show([]);
    expect(c.confirm_by).toEqual({ value: "auto", source: "default" });
    expect(c.confirm_timeout_seconds).toEqual({ value: 120, source: "default" });
    const file = join(dir, "confirm.toml");
    writeFileSync(file, 'confirm_by = "person"\nconfirm_timeout_seconds = 30\n');
    c = await show(["--config", file], { AGENT_SHELL_CONFIRM_TIMEOUT_SECONDS: "45" });
    expect(c.confirm_by).toEqual({ value: "person", source: `file:${file}` });
    expect(c.confirm_timeout_seconds).toEqual({ value: 45, source: "env:AGENT_SHELL_CONFIRM_TIMEOUT_SECONDS" });
    const bad = await runCli(["config", "show"], { env: isolated({ AGENT_SHELL_CONFIRM_BY: "robot" }) });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("confirm_by");
    expect(bad.stderr).toContain("AGENT_SHELL_CONFIRM_BY");
  });

  test("the XDG config file is read when --config is absent", async () => {
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(dir, "xdg", "agent-shell"), { recursive: true });
    writeFileSync(join(dir, "xdg", "agent-shell", "config.toml"), 'agent_command = ["my-agent", "-p", "{prompt}"]\n');
    const c = await show([]);
    expect(c.agent_command.value).toEqual(["my-agent", "-p", "{prompt}"]);
    expect(c.agent_command.source).toBe(`file:${join(dir, "xdg", "agent-shell", "config.toml")}`);
  });

  test("agent_command from env or flag: JSON array or shell words, quotes respected", async () => {
    let c = await show([], { AGENT_SHELL_AGENT_COMMAND: `my-agent --flag "two words" '{prompt}'` });
    expect(c.agent_command.value).toEqual(["my-agent", "--flag", "two words", "{prompt}"]);
    c = await show(["--agent-command", '["a b", "{prompt}"]']);
    expect(c.agent_command).toEqual({ value: ["a b", "{prompt}"], source: "flag" });
  });

  test("hosts tables are parsed and validated", async () => {
    const file = join(dir, "c.toml");
    writeFileSync(file, '[hosts.box]\nhost = "127.0.0.1"\nport = 2222\nuser = "dev"\n');
    const c = await show(["--config", file]);
    expect(c.hosts.value).toEqual({ box: { host: "127.0.0.1", port: 2222, user: "dev", strict_host_key_checking: "yes" } });
  });

  test("human output is a table of key, value, source", async () => {
    const r = await runCli(["config", "show", "--timeout", "9"], { env: isolated() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^KEY\s+VALUE\s+SOURCE/);
    expect(r.stdout).toMatch(/timeout_seconds\s+9\s+flag/);
  });
});

describe("bad configuration is refused with the key named, exit 2", () => {
  const cases: Array<[string, string, RegExp]> = [
    ["unknown key", "timeout_secs = 5\n", /unknown configuration key 'timeout_secs'/],
    ["wrong type", 'timeout_seconds = "soon"\n', /'timeout_seconds'/],
    ["bad value", "kill_grace_seconds = -3\n", /'kill_grace_seconds'/],
    ["bad host table", '[hosts.box]\nport = 22\n', /'hosts\.box\.host'/],
  ];
  for (const [name, text, message] of cases) {
    test(name, async () => {
      const file = join(dir, "bad.toml");
      writeFileSync(file, text);
      const r = await runCli(["config", "show", "--config", file], { env: isolated() });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain(file);
    });
  }

  test("TOML syntax errors name the file and the line", async () => {
    const file = join(dir, "syntax.toml");
    writeFileSync(file, "timeout_seconds = 5\n\nthis is not toml\n");
    const r = await runCli(["config", "show", "--config", file], { env: isolated() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toContain("line 3");
  });

  test("a bad environment variable is named", async () => {
    const r = await runCli(["config", "show"], { env: isolated({ AGENT_SHELL_TIMEOUT_SECONDS: "abc" }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("AGENT_SHELL_TIMEOUT_SECONDS");
  });

  test("mcp refuses to start on bad config, and nothing starts", async () => {
    const file = join(dir, "bad.toml");
    writeFileSync(file, "nope = 1\n");
    const r = await runCli(["mcp", "--config", file], { env: isolated() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'nope'");
    expect(r.stdout).toBe("");
  });

  test("a missing --config file is an error naming it", async () => {
    const r = await runCli(["config", "show", "--config", join(dir, "missing.toml")], { env: isolated() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("missing.toml");
  });
});
