/**
 * SPEC §14: the extended caution list (destructive forms and wrappers), the exempted
 * harmless forms, blocked commands behind wrappers, the blocked message in words, and
 * classification in linear time. Pure functions, table-driven.
 */
import { describe, expect, test } from "bun:test";
import { MAX_COMMAND_BYTES, commandLengthProblem } from "../../src/safety/command-length.ts";
import { classifyCommand } from "../../src/safety/rules/decide.ts";
import { parserReady } from "../../src/safety/parser/bash-parser.ts";

await parserReady();

const CAUTION_EXTENDED: string[] = [
  "git clean -f",
  "git clean -fdx",
  "git clean -d -f",
  "git clean --force",
  "git -C repo clean -xfd",
  "find . -delete",
  "find . -name '*.o' -delete",
  "find . -type f -exec rm {} \\;",
  "find . -exec rm -rf {} +",
  "find . -execdir /bin/rm {} +",
  "ls | xargs rm",
  "find . -print0 | xargs -0 rm -f",
  "xargs -I {} rm {}",
  "shred secret.txt",
  "truncate -s 0 app.log",
  "git checkout -- src/main.ts",
  "git checkout HEAD -- .",
  "git restore src/main.ts",
  "git restore .",
  "git restore --worktree src/a.ts",
  "git restore --staged --worktree a.ts",
  "git restore -SW a.ts",
  "git branch -D feature",
  "git branch --delete --force feature",
  "git branch -d -f feature",
  "/bin/rm x",
  "/usr/bin/rm x",
  "\\rm x",
  "'rm' x",
  "command rm x",
  "env rm x",
  "env -i PATH=/bin rm x",
  "FOO=1 rm x",
  "nice rm x",
  "nice -n 10 rm x",
  "nohup rm x",
  "timeout 5 rm x",
  "timeout -s KILL 5 rm x",
  "time rm x",
  "time -p rm x",
  "exec rm x",
  "nohup nice timeout 5 rm x",
  "xargs kill",
  "timeout 10 git push --force",
  "env git reset --hard",
  "nice /usr/bin/chown me f",
  "if true; then rm x; fi",
  "for f in *; do rm $f; done",
  "! rm x",
  "chmod 644 f",
  "chmod +x -R dir",
  "chmod go+w f",
  "kill -9 123",
  "kill -0",
];

const EXEMPT: string[] = [
  "chmod +x script.sh",
  "chmod u+x script.sh",
  "chmod a+x a.sh b.sh",
  "chmod +x ./build/tool && ./build/tool",
  "kill -0 1234",
  "kill -0 $$",
  "kill -0 $pid 2>/dev/null || echo gone",
  "kill -0 -1234",
  "nice chmod +x tool",
];

const NOT_CAUTION: string[] = [
  "git clean -n",
  "git clean --dry-run",
  "git checkout main",
  "git checkout -b feature",
  "git restore --staged a.ts",
  "git branch -d merged",
  "git branch feature",
  "find . -name '*.ts'",
  "find . -exec grep -l x {} +",
  "xargs echo",
  "command -v rm",
  "env",
  "time make",
  "nice make",
  "timeout 5 make test",
  "echo /bin/rm",
  "echo truncate",
  "cat shred.log",
];

const BLOCKED_THROUGH_WRAPPERS: string[] = [
  "sudo rm -rf /",
  "/bin/rm -rf /",
  "\\rm -rf /",
  "command rm -rf ~",
  "env rm -rf /",
  "nohup rm -rf / &",
  "timeout 5 dd if=/dev/zero of=/dev/sda",
  "xargs rm -rf /",
  "nice -n 5 /sbin/mkfs.ext4 /dev/sda1",
  "time chmod -R 777 /",
  "FOO=1 chown -R me /var",
];

describe("extended caution list (SPEC §14)", () => {
  test.each(CAUTION_EXTENDED)("asks: %p", (command) => {
    expect(classifyCommand(command).kind).toBe("caution");
  });
  test.each(EXEMPT)("exempt, runs without asking: %p", (command) => {
    expect(classifyCommand(command).kind).toBe("allowed");
  });
  test.each(NOT_CAUTION)("not flagged: %p", (command) => {
    expect(classifyCommand(command).kind).toBe("allowed");
  });
  test.each(BLOCKED_THROUGH_WRAPPERS)("blocked through a wrapper: %p", (command) => {
    expect(classifyCommand(command).kind).toBe("blocked");
  });
  test("a command behind more wrappers than are followed asks instead of guessing", () => {
    expect(classifyCommand("nice ".repeat(20) + "make").kind).toBe("caution");
  });
});

describe("blocked message says what the command would do", () => {
  test.each([
    ["rm -rf /", "deletes everything under / or the home directory"],
    ["dd if=/dev/zero of=x", "copies raw bytes onto a file or disk device"],
    ["mkfs.ext4 /dev/sda1", "formats a disk, erasing it"],
    ["echo x > /dev/sda", "overwrites a disk device"],
    ["echo x > /etc/passwd", "writes into system configuration under /etc or /boot"],
    ["echo x >> ~/.bashrc", "rewrites the shell's start-up files"],
    ["chmod -R 777 /", "makes system files writable by every user"],
    ["chown me /", "changes the owner of system files"],
    [":(){ :|:& };:", "a fork bomb that exhausts the machine's processes"],
  ])("%p: %p", (command, what) => {
    const c = classifyCommand(command);
    expect(c).toMatchObject({ kind: "blocked", what });
  });
});

describe("linear-time classification (SPEC §14)", () => {
  // Each case at a scale: n = 1 gives ~120 KB, the longest command line Linux accepts.
  const cases: [string, (n: number) => string][] = [
    ["40,000 separators", (n) => "a;b".repeat(40_000 * n)],
    ["40,000 ' ;'", (n) => "x ;".repeat(40_000 * n)],
    ["git push with many words", (n) => "git push " + "a ".repeat(60_000 * n)],
    ["chown with many words", (n) => "chown " + "a ".repeat(60_000 * n)],
    ["redirect-like text", (n) => "1>".repeat(60_000 * n)],
    ["many wrappers per command", (n) => "nice nice nice nice nice nice nice nice nice rm;".repeat(2_500 * n)],
    ["kill -0 with many pids then a flag", (n) => "kill -0 " + "1 ".repeat(60_000 * n) + "-x"],
    ["git options", (n) => "git " + "-C a ".repeat(24_000 * n) + "x"],
    ["find arguments", (n) => "find " + ". ".repeat(60_000 * n) + "-exex"],
    // Inputs that make whole-text regexes quadratic (1.1 to 1.7 s each).
    ["'git push ' repeated", (n) => "git push ".repeat(14_000 * n)],
    ["'git reset ' repeated", (n) => "git reset ".repeat(12_000 * n)],
    ["git with 40,000 options", (n) => "git " + "-x ".repeat(40_000 * n)],
    ["spaces after a separator", (n) => ";" + " ".repeat(120_000 * n)],
    ["40,000 '; rm -'", (n) => "; rm -".repeat(20_000 * n)],
    ["nested subshells", (n) => "(".repeat(60_000 * n) + "rm x" + ")".repeat(60_000 * n)],
  ];
  // What each costs is measured by bench/guards.ts (no clock gates a test).
  test.each(cases)("%p: 120 KB classified", (_, make) => {
    const command = make(1);
    expect(command.length).toBeGreaterThanOrEqual(117_000);
    expect(classifyCommand(command)).toBeDefined();
  });
});

describe("command length limit (Linux MAX_ARG_STRLEN)", () => {
  test("131071 bytes fit; one more byte does not, and the message names the limit", () => {
    expect(commandLengthProblem("x".repeat(MAX_COMMAND_BYTES))).toBeNull();
    expect(commandLengthProblem("x".repeat(MAX_COMMAND_BYTES + 1))).toContain("131071 bytes");
  });
  test("counted in UTF-8 bytes", () => {
    const euro = "€".repeat(Math.floor(MAX_COMMAND_BYTES / 3) + 1); // 3 bytes each
    expect(commandLengthProblem(euro)).toContain(`is ${Buffer.byteLength(euro)} bytes long`);
  });
});
