/**
 * SPEC §22 against the compiled binary: the user's rules decide over MCP, a project's rules
 * file counts only while trusted, and `agent-shell rules check|test|trust` say so.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/cli.ts";
import { type McpSession, startServer } from "../helpers/mcp.ts";

setDefaultTimeout(60_000);

const RULES = `
[[rules]]
prefix = ["git", "push"]
decision = "deny"
reason = "pushes go through CI"
[[rules.examples]]
command = "make && git push"
decision = "deny"

[[rules]]
prefix = ["rm", "-rf", "node_modules"]
decision = "allow"
[[rules.examples]]
command = "rm -rf node_modules"
decision = "allow"

[[rules]]
prefix = ["npm", "install"]
decision = "ask"
reason = "new dependencies are reviewed"

[[rules]]
pattern = "^terraform (apply|destroy)"
decision = "deny"
reason = "infrastructure changes go through review"

[[rules]]
prefix = ["rm", "-rf", "/"]
decision = "allow"
`;

const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("rules over MCP", () => {
  let s: McpSession;
  beforeAll(async () => {
    const dir = temp("as-rules-config-");
    writeFileSync(join(dir, "config.toml"), RULES);
    s = await startServer({ args: ["--config", join(dir, "config.toml")], env: { XDG_CONFIG_HOME: dir } });
  });
  afterAll(() => s.close());

  test.each(["git push", "true && git push", "(git push)", "echo $(git push)", "bash -c 'git push'", "env git push --tags"])("a deny rule blocks %p with its reason", async (command) => {
    const r = await s.call("bash", { command });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("pushes go through CI");
  });

  test("quoted text is data: echo 'git push' runs", async () => {
    expect((await s.call("bash", { command: "echo 'git push'" })).stdout).toBe("git push\n");
  });

  test("an allow rule waives the confirmation of exactly the caution command it names", async () => {
    const victim = join(s.cwd, "node_modules");
    writeFileSync(join(s.cwd, "keep"), "x");
    (await import("node:fs")).mkdirSync(victim);
    const r = await s.call("bash", { command: "rm -rf node_modules" });
    expect(r.exit_code).toBe(0);
    expect(existsSync(victim)).toBe(false);
    const other = await s.call("bash", { command: "rm -rf keep" });
    expect(other.needs_confirmation).toBe(true);
    expect(existsSync(join(s.cwd, "keep"))).toBe(true);
  });

  test("an ask rule asks, with its reason", async () => {
    const r = await s.call("bash", { command: "npm install left-pad" });
    expect(r.needs_confirmation).toBe(true);
    expect(r.message).toContain("new dependencies are reviewed");
  });

  test("a pattern rule matches", async () => {
    const r = await s.call("bash", { command: "cd . && terraform destroy -auto-approve" });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("infrastructure changes go through review");
  });

  test("rm -rf / stays blocked whatever the rules (an allow rule naming it included)", async () => {
    const r = await s.call("bash", { command: "rm -rf /" });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toStartWith("Command blocked (deletes everything under / or the home directory)");
  });

  test('eval "$x" asks', async () => {
    const r = await s.call("bash", { command: 'x=ls; eval "$x"' });
    expect(r.needs_confirmation).toBe(true);
    expect(r.message).toContain("cannot be known");
  });
});

describe("a project's rules file", () => {
  test("is ignored until trusted, and again after a command rewrites it", async () => {
    const xdg = temp("as-rules-xdg-");
    const project = temp("as-rules-project-");
    const env = { XDG_CONFIG_HOME: xdg };
    writeFileSync(join(project, ".agent-shell.toml"), '[[rules]]\nprefix = ["make", "deploy"]\ndecision = "deny"\nreason = "deploys are manual"\n');
    writeFileSync(join(xdg, "none.toml"), "");
    const s = await startServer({ cwd: project, env, args: ["--config", join(xdg, "none.toml")] });
    try {
      expect((await s.call("bash", { command: "echo make deploy; make deploy 2>/dev/null; true" })).error_code).toBeUndefined();
      const trusted = await runCli(["rules", "trust"], { env, cwd: project });
      expect(trusted.code).toBe(0);
      expect(trusted.stdout).toContain("1 rule");
      expect((await s.call("bash", { command: "make deploy" })).error).toContain("deploys are manual");
      // A command rewrites the file to drop the rule: the file is no longer the trusted one, so it counts for nothing.
      const rewrite = await s.call("bash", { command: `printf '[[rules]]\\nprefix = ["curl"]\\ndecision = "allow"\\n' > .agent-shell.toml` });
      expect(rewrite.exit_code).toBe(0);
      const after = await s.call("bash", { command: "make deploy 2>/dev/null; true" });
      expect(after.error_code).toBeUndefined();
      const check = await runCli(["rules", "check", "--config", join(xdg, "none.toml"), "--", "curl", "x"], { env, cwd: project });
      expect(check.stderr).toContain("changed since it was trusted");
    } finally {
      await s.close();
    }
  });
});

describe("agent-shell rules check and test", () => {
  test("check --json names the decision and the rule, per simple command", async () => {
    const dir = temp("as-rules-cli-");
    writeFileSync(join(dir, "c.toml"), RULES);
    const r = await runCli(["rules", "check", "--json", "--config", join(dir, "c.toml"), "--", "ls", "&&", "bash -c 'git push'"], { env: { XDG_CONFIG_HOME: dir }, cwd: dir });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.decision).toBe("deny");
    expect(out.by).toContain("prefix git push");
    expect(out.commands.map((c: { command: string }) => c.command)).toEqual(["ls", "bash -c 'git push'", "git push"]);
    expect(out.commands[2]).toMatchObject({ decision: "deny", what: "pushes go through CI" });
    const plain = await runCli(["rules", "check", "--config", join(dir, "c.toml"), "--", "rm -rf node_modules"], { env: { XDG_CONFIG_HOME: dir }, cwd: dir });
    expect(plain.stdout).toContain("decision: allow");
  });

  test("test passes when the examples hold, and fails (exit 1) naming the one that does not", async () => {
    const dir = temp("as-rules-examples-");
    writeFileSync(join(dir, "good.toml"), RULES);
    const good = await runCli(["rules", "test", join(dir, "good.toml")], { cwd: dir });
    expect(good.code).toBe(0);
    expect(good.stdout).toContain("2 of 2 examples passed");
    writeFileSync(join(dir, "bad.toml"), RULES + '[[rules.examples]]\ncommand = "echo \'git push\'"\ndecision = "deny"\n');
    const bad = await runCli(["rules", "test", join(dir, "bad.toml")], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("FAIL  echo 'git push': expected deny, got allow");
    expect(bad.stdout).toContain("2 of 3 examples passed");
  });
});
