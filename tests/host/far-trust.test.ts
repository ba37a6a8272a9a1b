/**
 * SPEC §26, the far side: the server acts on nothing a far command planted. The far binary
 * is checked by its SHA-256 before every start and re-copied when it differs, and far
 * commands cannot write it; a far agent's answers are data (a deadline on every call, its
 * confirmation text replaced by ours, its notices escaped and capped). The far sides here
 * are this machine through exec hosts: `env HOME=…` (a real agent-shell in a home of its
 * own) and a hostile stand-in (tests/fixtures/far/hostile-agent.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { escapeControls, farDeadlineMs, RateCap } from "../../src/host/far/far-answers.ts";
import { launchScript, parseStatus } from "../../src/runtime/far/agent-scripts.ts";
import { runCli } from "../helpers/cli.ts";
import { BINARY, startServer } from "../helpers/mcp.ts";
import { version } from "../../package.json";

const HOSTILE = resolve(import.meta.dir, "../fixtures/far/hostile-agent.ts");
let dir: string;
let home: string;
let configFile: string;

const sha256 = (file: string) => new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");

beforeAll(() => {
  dir = realpathSync(mkdtempSync("/var/tmp/as-test-far-trust-"));
  home = join(dir, "far-home");
  mkdirSync(home);
  const farEnv = [`HOME=${home}`, `XDG_STATE_HOME=${home}/.local/state`, `XDG_CONFIG_HOME=${home}/.config`];
  configFile = join(dir, "config.toml");
  writeFileSync(
    configFile,
    [
      `kill_grace_seconds = 0`,
      `[hosts.far]`,
      `exec = ${JSON.stringify(["env", ...farEnv])}`,
      `[hosts.hostile]`,
      `exec = ${JSON.stringify([process.execPath, HOSTILE])}`,
      ``,
    ].join("\n"),
  );
});

afterAll(async () => {
  // The far side's daemon lives in the far home's state dir: stop it before the files go.
  await runCli(["daemon", "stop"], { env: { HOME: home, XDG_STATE_HOME: join(home, ".local", "state") } });
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("the far binary", () => {
  test("far commands cannot write it; one replaced behind their back is detected by its hash, re-copied and never run", async () => {
    const cached = join(home, ".cache", "agent-shell", version, "agent-shell");
    const near = await startServer({ args: ["--config", configFile] });
    try {
      const first = await near.call("bash", { command: "echo far", host: "far" });
      expect(first).toMatchObject({ stdout: "far\n", exit_code: 0, host: "far" });
      expect(sha256(cached)).toBe(sha256(BINARY));
      // Inside the far sandbox the cache is read-only, though its home and ~/.cache are writable.
      // (A rename, as a running binary cannot be written in place; `mv -f` asks for confirmation first.)
      const plant = { command: `echo x > ~/.cache/other-tool; echo planted > ${cached}.new && mv -f ${cached}.new ${cached}`, host: "far" };
      expect(await near.call("bash", plant)).toMatchObject({ needs_confirmation: true, command: plant.command });
      const planted = await near.call("bash", { ...plant, confirmed: true });
      expect(planted.exit_code).not.toBe(0);
      expect(planted.stderr).toMatch(/Read-only file system/);
      expect(existsSync(join(home, ".cache", "other-tool"))).toBe(true);
      expect(sha256(cached)).toBe(sha256(BINARY));
    } finally {
      await near.close();
    }

    // Replaced from outside any sandbox (renamed over, as a running binary is): same version string, other bytes.
    const marker = join(dir, "planted-ran");
    writeFileSync(`${cached}.new`, `#!/bin/sh\necho ran "$@" >> ${marker}\necho "agent-shell ${version}"\n`, { mode: 0o755 });
    renameSync(`${cached}.new`, cached);
    const again = await startServer({ args: ["--config", configFile] });
    try {
      const r = await again.call("bash", { command: "echo again", host: "far" });
      expect(r).toMatchObject({ stdout: "again\n", exit_code: 0, host: "far" });
      expect(existsSync(marker)).toBe(false); // not even its --version ran
      expect(sha256(cached)).toBe(sha256(BINARY)); // copied over again
    } finally {
      await again.close();
    }
  }, 120_000);
});

describe("a far agent's answers are data", () => {
  test("a far agent that never answers: the call fails near its timeout_seconds plus the grace, and the server answers other calls meanwhile", async () => {
    const near = await startServer({ args: ["--config", configFile] });
    try {
      const t0 = performance.now();
      const hung = near.call("bash", { command: "hang", host: "hostile", timeout_seconds: 1 }).then((r) => ({ r, s: (performance.now() - t0) / 1000 }));
      await Bun.sleep(500); // the far call is on its way (nothing to wait on: it never answers)
      // Answered while the hung call still waits (it lasts over 10 s, checked below).
      const here = near.call("bash", { command: "echo here" });
      expect(await Promise.race([here.then(() => "here"), hung.then(() => "hung")])).toBe("here");
      expect(await here).toMatchObject({ stdout: "here\n", exit_code: 0 });
      const { r, s } = await hung;
      // 1 s limit + kill grace 0 + the 10 s margin
      expect(s).toBeGreaterThan(10.5);
      expect(r.error_code).toBe("IO_ERROR");
      expect(r.error).toContain("Host 'hostile'");
      expect(r.error).toContain("no answer to bash within 11 s");
      expect(await near.call("bash", { command: "echo still" })).toMatchObject({ stdout: "still\n" });
    } finally {
      await near.close();
    }
  }, 60_000);

  test("a far agent cannot ask the person, its confirmation text is replaced by ours, its notices are escaped and capped", async () => {
    const asked: unknown[] = [];
    const near = await startServer({
      args: ["--config", configFile],
      capabilities: { elicitation: { form: {} } },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, (req) => {
          asked.push(req.params);
          return { action: "accept", content: { confirm: true } };
        }),
    });
    try {
      const r = await near.call("bash", { command: "confirm", host: "hostile" });
      expect(asked).toEqual([]); // the far side's elicitation never reached the person
      expect(r.needs_confirmation).toBe(true);
      expect(r.command).toBe("confirm"); // what we sent, not the far side's "ls"
      expect(r.host).toBe("hostile");
      expect(r.message).toContain("Host 'hostile' asks for confirmation before running: confirm.");
      expect(JSON.stringify(r)).not.toContain("just say yes");

      const flood = near.notices.filter((n) => n.event === "flood");
      const dropped = near.notices.filter((n) => n.event === "notices_dropped");
      expect(flood.length).toBeLessThanOrEqual(101); // at most 50 a second, the burst seen within at most two of them
      expect(flood.at(-1)).toMatchObject({ n: 200, text: "last", host: "hostile" });
      expect(dropped.length).toBeGreaterThan(0);
      expect(flood.length + dropped.reduce((sum, d) => sum + (d.dropped as number), 0)).toBe(201);
      for (const n of flood) expect(n.text as string).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\u202e]/);
      expect(flood[0]!.text).toBe("\\u001b[2J\\u001b]0;owned\\u0007\\u000dfake\\u202eline");
    } finally {
      await near.close();
    }
  }, 60_000);
});

describe("far-answers rules", () => {
  test("the launcher checks the hash before running anything, on our platform only; its status says what differs", () => {
    const script = launchScript({ version: "1.0", cwd: "~", allow: [], sha256: "ab12", platform: { os: "Linux", arch: "x86_64" } });
    expect(script.indexOf("sha256sum")).toBeLessThan(script.indexOf("--version"));
    expect(script).toContain(`[ "$(uname -s) $(uname -m)" = 'Linux x86_64' ]`);
    expect(launchScript({ version: "1.0", cwd: "~", allow: [] })).not.toContain("sha256sum"); // run from source: nothing to compare with
    expect(parseStatus("agent-shell-far differs /h/.cache/agent-shell/1.0/agent-shell 0f0f")).toEqual({ kind: "differs", path: "/h/.cache/agent-shell/1.0/agent-shell", sha256: "0f0f" });
  });

  test("deadlines: a call's own time limit plus the kill grace and a 10 s margin", () => {
    expect(farDeadlineMs("bash", { timeout_seconds: 120 }, 2)).toBe(132_000);
    expect(farDeadlineMs("bash", { timeout_seconds: 120, run_in_background: true, ready_timeout_seconds: 300 }, 2)).toBe(312_000);
    expect(farDeadlineMs("task_output", { wait: true, timeout_seconds: 5 }, 2)).toBe(17_000);
    expect(farDeadlineMs("task_output", { wait: true }, 2)).toBe(42_000); // its default wait, 30 s
    expect(farDeadlineMs("task_output", {}, 2)).toBe(12_000);
    expect(farDeadlineMs("write_stdin", { yield_ms: 3000 }, 0)).toBe(13_000);
    expect(farDeadlineMs("kill_shell", {}, 2)).toBe(12_000);
    expect(farDeadlineMs("bash", { timeout_seconds: 10 ** 9 }, 2)).toBe(2 ** 31 - 1); // a timer's longest
  });

  test("escapeControls: keys and values, tabs and newlines kept", () => {
    expect(escapeControls<unknown>({ "a\x1bb": ["x\x9by", "t\tn\n", 3, null] })).toEqual({ "a\\u001bb": ["x\\u009by", "t\tn\n", 3, null] });
  });

  test("RateCap: n a second, the rest counted", () => {
    const cap = new RateCap(2);
    expect([cap.allow(1000), cap.allow(1100), cap.allow(1200), cap.allow(1999)]).toEqual([true, true, false, false]);
    expect(cap.takeDropped()).toBe(2);
    expect(cap.allow(2000)).toBe(true);
    expect(cap.takeDropped()).toBe(0);
  });
});
