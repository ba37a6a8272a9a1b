/**
 * SPEC §22: the record of every call, `<state>/audit.jsonl`, against the compiled binary
 * over the MCP SDK client and its command line: each call is on disk before its result
 * arrives, with who called, what, where, the decision and what made it, who confirmed and
 * the outcome; secret-named env values never; 0600, out of a sandboxed command's reach;
 * rotated; printed by `agent-shell audit`.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/cli.ts";
import { type McpSession, startServer } from "../helpers/mcp.ts";

setDefaultTimeout(60_000);

const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

describe("the audit record over MCP", () => {
  let s: McpSession;
  let configDir: string;
  let file: string;
  beforeAll(async () => {
    configDir = realpathSync(mkdtempSync(join(tmpdir(), "as-audit-config-")));
    const config = join(configDir, "config.toml");
    writeFileSync(
      config,
      '[[rules]]\nprefix = ["git", "push"]\ndecision = "deny"\nreason = "pushes go through CI"\n[[rules]]\nprefix = ["rm", "-f", "waived.txt"]\ndecision = "allow"\n',
    );
    s = await startServer({ args: ["--config", config], env: { XDG_CONFIG_HOME: configDir } });
    file = join(s.stateDir, "audit.jsonl");
  });
  afterAll(async () => {
    await s.close();
    rmSync(configDir, { recursive: true, force: true });
  });
  const last = () => lines(file).at(-1);

  test("a call is in the file before its result arrives, with client, command, cwd, host, sandbox and exit code", async () => {
    const r = await s.call("bash", { command: "echo recorded; exit 3" });
    expect(r.exit_code).toBe(3);
    // Read at once: the line was written before the result was sent.
    const e = last();
    expect(e).toMatchObject({
      tool: "bash",
      command: "echo recorded; exit 3",
      cwd: s.cwd,
      host: "local",
      decision: "allow",
      connection: { client: "agent-shell-tests", version: "0", transport: "mcp" },
      outcome: { exit_code: 3, output_bytes: 9 },
    });
    expect(e.sandbox).toBe(r.sandbox);
    expect(typeof e.outcome.duration_ms).toBe("number");
    expect(Date.parse(e.time)).toBeGreaterThan(Date.now() - 60_000);
  });

  test("the file is mode 0600", () => {
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  test("a secret-named env value is never written; the others are", async () => {
    await s.call("bash", { command: "true", env: { DEPLOY_TOKEN: "tok-5ecret-value", aws_secret_access_key: "k3y-value", PLAIN: "visible-value" } });
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain("tok-5ecret-value");
    expect(text).not.toContain("k3y-value");
    expect(last().env).toEqual({ DEPLOY_TOKEN: "<redacted>", aws_secret_access_key: "<redacted>", PLAIN: "visible-value" });
  });

  test("a §6 refusal says what made it", async () => {
    const r = await s.call("bash", { command: "rm -rf /" });
    expect(r.error_code).toBe("BLOCKED");
    expect(last()).toMatchObject({ command: "rm -rf /", decision: "deny", decided_by: "§6 blocked", outcome: { error_code: "BLOCKED" } });
  });

  test("a rule's refusal names the rule", async () => {
    const r = await s.call("bash", { command: "echo ok && git push origin main" });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("pushes go through CI");
    expect(last().decided_by).toContain("prefix git push");
    expect(last().decision).toBe("deny");
  });

  test("a confirmation: asked, then confirmed by the model", async () => {
    writeFileSync(join(s.cwd, "victim"), "x");
    const asked = await s.call("bash", { command: "rm victim" });
    expect(asked.needs_confirmation).toBe(true);
    expect(last()).toMatchObject({ decision: "ask", decided_by: "§6 caution", outcome: { needs_confirmation: true } });
    expect(last().confirmed_by).toBeUndefined();
    const ran = await s.call("bash", { command: "rm victim", confirmed: true });
    expect(ran.exit_code).toBe(0);
    expect(last()).toMatchObject({ decision: "ask", confirmed_by: "model", outcome: { exit_code: 0 } });
  });

  test("a caution waived by an allow rule: confirmed by the rule, which is named", async () => {
    writeFileSync(join(s.cwd, "waived.txt"), "x");
    const r = await s.call("bash", { command: "rm -f waived.txt" });
    expect(r.exit_code).toBe(0);
    expect(last()).toMatchObject({ decision: "allow", confirmed_by: "rule" });
    expect(last().decided_by).toContain("prefix rm -f waived.txt");
  });

  test("every tool is recorded, not only bash", async () => {
    const bg = await s.call("bash", { command: "sleep 0.1", run_in_background: true });
    expect(last()).toMatchObject({ tool: "bash", outcome: { task_id: bg.task_id } });
    await s.call("task_output", { task_id: bg.task_id, wait: true, timeout: 10 });
    expect(last().tool).toBe("task_output");
    await s.call("task_list", {});
    expect(last().tool).toBe("task_list");
  });

  test("a sandboxed command can neither read nor change the file", async () => {
    // The marker is written `tamp""ered` in the command, so only a successful write puts `tampered` in the file.
    const probe = await s.call("bash", { command: `cat ${file}; echo tamp""ered >> ${file}` });
    if (probe.sandbox === "off" || probe.sandbox === "unavailable") return; // no sandbox on this machine: §11 says so elsewhere
    expect(probe.exit_code).not.toBe(0);
    expect(probe.stdout ?? "").not.toContain('"tool"');
    expect(readFileSync(file, "utf8")).not.toContain("tampered");
  });

  test("a burst of 1,000 parallel calls: 1,000 whole lines, in the order their results arrived", async () => {
    const before = lines(file).length;
    const arrived: string[] = [];
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) => s.call("bash", { command: `echo burst-${i}` }).then(() => arrived.push(`echo burst-${i}`))),
    );
    const after = lines(file); // JSON.parse of every line: a torn line would throw
    const burst = after.slice(before).filter((e) => e.command?.startsWith("echo burst-"));
    expect(burst).toHaveLength(1000);
    // Each line is written before its result goes out on the connection: the same order.
    expect(burst.map((e) => e.command)).toEqual(arrived);
  }, 120_000);
});

describe("rotation, audit = false, and the command line", () => {
  const dirs: string[] = [];
  const temp = (prefix: string) => {
    const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  test("rotated at audit_max_bytes, 5 files kept besides the current one", async () => {
    const dir = temp("as-audit-rot-");
    writeFileSync(join(dir, "c.toml"), "audit_max_bytes = 1000\n");
    const s = await startServer({ args: ["--config", join(dir, "c.toml")] });
    try {
      for (let i = 0; i < 40; i++) await s.call("bash", { command: `echo rotation-${i} ${"x".repeat(100)}` });
      const file = join(s.stateDir, "audit.jsonl");
      for (let i = 1; i <= 5; i++) expect(existsSync(`${file}.${i}`)).toBe(true);
      expect(existsSync(`${file}.6`)).toBe(false);
      for (const f of [file, `${file}.1`, `${file}.5`]) {
        expect(statSync(f).size).toBeLessThanOrEqual(1000);
        expect(statSync(f).mode & 0o777).toBe(0o600);
      }
      expect(lines(file).at(-1).command).toStartWith("echo rotation-39 ");
    } finally {
      await s.close();
    }
  });

  test("audit = false writes nothing", async () => {
    const dir = temp("as-audit-off-");
    writeFileSync(join(dir, "c.toml"), "audit = false\n");
    const s = await startServer({ args: ["--config", join(dir, "c.toml")] });
    try {
      await s.call("bash", { command: "true" });
      expect(existsSync(join(s.stateDir, "audit.jsonl"))).toBe(false);
    } finally {
      await s.close();
    }
  });

  test("a CLI `call` is recorded, and `agent-shell audit` prints it (filters, --json)", async () => {
    const state = temp("as-audit-cli-");
    const cwd = temp("as-audit-cwd-");
    const env = { AGENT_SHELL_STATE_DIR: state, XDG_CONFIG_HOME: temp("as-audit-xdg-") };
    const called = await runCli(["call", "bash", JSON.stringify({ command: "echo from-the-cli" })], { env, cwd });
    expect(called.code).toBe(0);
    await runCli(["call", "bash", JSON.stringify({ command: "rm -rf /" })], { env, cwd });
    const human = await runCli(["audit"], { env });
    expect(human.code).toBe(0);
    const [first, second] = human.stdout.trim().split("\n");
    expect(first).toMatch(/^\d{4}-\d\d-\d\dT\S+Z {2}agent-shell call {2}allow {2}echo from-the-cli {2}→ exit 0 \(\d+ ms\)$/);
    expect(second).toContain("deny  rm -rf /  → BLOCKED");
    const denied = await runCli(["audit", "--decision", "deny", "--json", "--since", "1h"], { env });
    const entries = denied.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ command: "rm -rf /", connection: { transport: "cli" }, cwd });
    expect((await runCli(["audit", "--tool", "task_list"], { env })).stdout).toBe("");
    expect((await runCli(["audit", "--since", "soon"], { env })).code).toBe(2);
  });

  test("`agent-shell audit --follow` prints calls as they are recorded", async () => {
    const s = await startServer();
    const proc = Bun.spawn([(await import("../helpers/mcp.ts")).BINARY, "audit", "--follow"], {
      env: { ...process.env, AGENT_SHELL_STATE_DIR: s.stateDir },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stdout.getReader();
      let seen = "";
      await s.call("bash", { command: "echo followed-call" });
      while (!seen.includes("followed-call")) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += new TextDecoder().decode(value);
      }
      expect(seen).toContain("echo followed-call  → exit 0");
    } finally {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      await s.close();
    }
  });
});

describe("OpenTelemetry", () => {
  test("with OTEL_EXPORTER_OTLP_ENDPOINT set, each call arrives at a local OTLP receiver as a span with the audit fields", async () => {
    const bodies: unknown[] = [];
    let arrived!: () => void;
    const spanArrived = new Promise<void>((resolve) => (arrived = resolve));
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const url = new URL(req.url);
        if (req.method === "POST" && url.pathname === "/v1/traces") {
          bodies.push(await req.json());
          arrived();
        }
        return Response.json({});
      },
    });
    const s = await startServer({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, OTEL_BSP_SCHEDULE_DELAY: "100" } });
    try {
      await s.call("bash", { command: "echo traced", env: { API_KEY: "never-exported" } });
      await spanArrived;
      const spans = (bodies as any[]).flatMap((b) => b.resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((x: any) => x.spans)));
      const span = spans.find((sp: any) => sp.name === "agent-shell bash");
      expect(span).toBeDefined();
      const attrs = Object.fromEntries(span.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]));
      expect(attrs["agent_shell.command"]).toBe("echo traced");
      expect(attrs["agent_shell.connection.client"]).toBe("agent-shell-tests");
      expect(attrs["agent_shell.decision"]).toBe("allow");
      expect(Number(attrs["agent_shell.outcome.exit_code"])).toBe(0);
      expect(attrs["agent_shell.env.API_KEY"]).toBe("<redacted>");
      expect(JSON.stringify(bodies)).not.toContain("never-exported");
    } finally {
      await s.close();
      receiver.stop(true);
    }
  });
});
