/**
 * SPEC §6 safety: the blocked and caution classification (pure functions, a table of every
 * SPEC example and the original's test cases), and the MCP confirmation flow end to end.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blockedPattern, needsCaution } from "../../src/safety/rules/decide.ts";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { parserReady } from "../../src/safety/parser/bash-parser.ts";

await parserReady();

// Real processes on a shared 2-core machine: bun's 5 s default is too tight under load.
setDefaultTimeout(30_000);

const BLOCKED: string[] = [
  // recursive rm of /, /* or ~ (the original's cases first)
  "rm -rf /",
  "rm -rf /*",
  "rm -rf ~",
  "rm -r /",
  "rm -fr /",
  "rm -Rf /",
  "rm -r -f /",
  "rm -rf ~/",
  "rm -rf ~/*",
  "rm -rf / --no-preserve-root",
  "rm -rf --no-preserve-root /",
  // dd if=, mkfs
  "dd if=/dev/zero of=/dev/sda",
  "dd bs=1M if=/dev/urandom of=disk.img",
  "mkfs.ext4 /dev/sda1",
  "mkfs -t ext4 /dev/sdb",
  // redirects onto devices and into system / shell-config files
  "echo x > /dev/sda",
  "cat image >/dev/sdb1",
  "cat image > /dev/nvme0n1",
  "echo 'malicious' > /etc/passwd",
  "echo x >> /etc/hosts",
  "echo x > /boot/grub/grub.cfg",
  "echo 'alias ls=rm' >> ~/.bashrc",
  "echo x > ~/.bash_profile",
  "echo x > ~/.profile",
  "echo x > ~/.zshrc",
  // permission bombs
  "chmod 777 /",
  "chmod -R 777 /",
  "chmod 777 /etc",
  "chown user /",
  "chown -R user:user /var",
  // fork bomb
  ":(){ :|:& };:",
  // at the start of a line after whitespace, or after ; & | && ||
  "   rm -rf /",
  "\trm -rf /",
  "echo hi; rm -rf /",
  "echo hi;rm -rf /",
  "true && rm -rf /",
  "false || rm -rf /",
  "echo y | rm -rf /",
  "sleep 1 & rm -rf /",
  "echo hi\nrm -rf /",
  "cd /tmp && mkfs.ext4 /dev/sdc",
];

const NOT_BLOCKED: string[] = [
  "ls -l",
  "echo harm -rf /",
  "echo farm -rf /*",
  "echo rm -rf /",
  "grep -r 'rm -rf /' docs",
  "rm -rf ./build",
  "rm -rf /tmp/some-dir",
  "rm -rf node_modules",
  "echo mkfs",
  "cat /etc/passwd",
  "grep root < /etc/passwd",
  "echo x > /tmp/etc/file",
  "ls ~/.bashrc",
  "cat ~/.profile",
  "echo x > /dev/null",
  "echo x 2>&1",
  "chmod 777 ./script.sh",
  "chmod 755 /usr/local/bin/tool",
  "chown user ./file",
];

const CAUTION: string[] = [
  // the original's cases
  "sudo apt update",
  "rm file.txt",
  "git push --force",
  "git reset --hard HEAD",
  "rm\tfile.txt",
  "rm\nfile.txt",
  "echo hi; rm file",
  "echo hi | rm file",
  "rm",
  // every command word the SPEC lists
  "su",
  "su - root",
  "mv a b",
  "chmod 644 script.sh",
  "chown me file",
  "kill 1234",
  "kill -9 1234",
  "pkill node",
  "killall node",
  "docker rm container1",
  "docker rmi image1",
  "cargo publish",
  "npm publish",
  "npm publish --access public",
  "git push -f",
  "git push -f origin main",
  "git push origin main --force",
  "git push origin main -f",
  "git reset --hard",
  "git reset origin/main --hard",
  // after separators and whitespace
  "  rm x",
  "true && sudo ls",
  "false || mv a b",
  "make & kill 1",
  "cd dir; git push --force",
];

const NOT_CAUTION: string[] = [
  "echo farm animal",
  "echo supper",
  "mkdir form",
  "echo remove",
  "ls -l",
  "git status",
  "git push",
  "git push origin main",
  "git push origin feature-fix",
  "git reset HEAD~1",
  "git reset --soft HEAD~1",
  "npm install",
  "npm run build",
  "cargo build",
  "docker ps",
  "docker run --rm alpine true",
  "echo kill",
  "grep -r sudo .",
  "cat rm.log",
  "./rmdir-helper",
  "summary",
  "echo killall",
  "sumo",
  // SPEC §14 exempts harmless forms from asking: making a file executable
  "chmod +x script.sh",
];

describe("blocked patterns (pure)", () => {
  test.each(BLOCKED)("blocked: %p", (command) => {
    expect(blockedPattern(command)).not.toBeNull();
  });
  test.each(NOT_BLOCKED)("not blocked: %p", (command) => {
    expect(blockedPattern(command)).toBeNull();
  });
});

describe("caution patterns (pure)", () => {
  test.each(CAUTION)("needs confirmation: %p", (command) => {
    expect(needsCaution(command)).toBe(true);
  });
  test.each(NOT_CAUTION)("no confirmation needed: %p", (command) => {
    expect(needsCaution(command)).toBe(false);
  });
});

describe("safety over MCP", () => {
  let s: McpSession;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => {
    await s.close();
  });

  const victim = (name: string) => {
    const path = join(s.cwd, name);
    writeFileSync(path, "data");
    return path;
  };

  test("a blocked command is refused with BLOCKED 'Command blocked (<what it would do>): …' and what to do instead, never the pattern", async () => {
    const raw = await s.callRaw("bash", { command: "rm -rf /", description: "nuke" });
    const r = raw.structuredContent;
    expect(raw.isError).toBe(true);
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toMatch(/^Command blocked \(deletes everything under \/ or the home directory\): agent-shell never runs this\./);
    expect(r.error).not.toContain("pattern");
    expect(r.context.command).toBe("rm -rf /");
  });

  test("a blocked command stays blocked with confirmed: true", async () => {
    const r = await s.call("bash", { command: "rm -rf /", confirmed: true });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toStartWith("Command blocked (");
    expect(r.error).toContain("): agent-shell never runs this");
  });

  test("a blocked command is refused in the background too", async () => {
    const r = await s.call("bash", { command: "mkfs.ext4 /dev/sda1", run_in_background: true });
    expect(r.error_code).toBe("BLOCKED");
  });

  test("`echo harm -rf /` is not blocked and runs", async () => {
    const r = await s.call("bash", { command: "echo harm -rf /" });
    expect(r.stdout).toBe("harm -rf /\n");
  });

  test("a caution command returns needs_confirmation (not an error) and does not run", async () => {
    const path = victim("first.txt");
    const raw = await s.callRaw("bash", { command: "rm first.txt", description: "remove it" });
    const r = raw.structuredContent;
    expect(raw.isError).toBe(false);
    expect(r.needs_confirmation).toBe(true);
    expect(r.command).toBe("rm first.txt");
    expect(typeof r.message).toBe("string");
    expect(r.message).toContain("rm first.txt");
    expect(r.description).toBe("remove it");
    expect(r.error).toBeUndefined();
    expect(existsSync(path)).toBe(true);
  });

  test("needs_confirmation has no description field when none was given", async () => {
    const r = await s.call("bash", { command: "mv nothing nowhere" });
    expect(r.needs_confirmation).toBe(true);
    expect("description" in r).toBe(false);
  });

  test("confirmed: true after the request runs the command once", async () => {
    const path = victim("flow.txt");
    await s.call("bash", { command: "rm flow.txt" });
    const r = await s.call("bash", { command: "rm flow.txt", confirmed: true });
    expect(r.success).toBe(true);
    expect(r.exit_code).toBe(0);
    expect(existsSync(path)).toBe(false);
  });

  test("replaying the confirmation is refused: the record is gone after one use", async () => {
    const path = victim("replay.txt");
    await s.call("bash", { command: "rm replay.txt" });
    await s.call("bash", { command: "rm replay.txt", confirmed: true });
    writeFileSync(path, "again");
    const r = await s.call("bash", { command: "rm replay.txt", confirmed: true });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("Cannot confirm command that was not previously flagged for confirmation");
    expect(existsSync(path)).toBe(true);
  });

  test("confirmed: true for a command that was never flagged is refused with BLOCKED and does not run", async () => {
    const path = victim("never.txt");
    const raw = await s.callRaw("bash", { command: "rm never.txt", confirmed: true });
    expect(raw.isError).toBe(true);
    expect(raw.structuredContent.error_code).toBe("BLOCKED");
    expect(raw.structuredContent.error).toContain("Cannot confirm command that was not previously flagged for confirmation");
    expect(raw.structuredContent.context.command).toBe("rm never.txt");
    expect(existsSync(path)).toBe(true);
  });

  test("confirmation matches byte-for-byte: a trailing space is a different command", async () => {
    const path = victim("space.txt");
    await s.call("bash", { command: "rm space.txt" });
    const r = await s.call("bash", { command: "rm space.txt ", confirmed: true });
    expect(r.error_code).toBe("BLOCKED");
    expect(existsSync(path)).toBe(true);
  });

  test("confirmation matches byte-for-byte: a leading space is a different command", async () => {
    const path = victim("lead.txt");
    await s.call("bash", { command: "rm lead.txt" });
    const r = await s.call("bash", { command: " rm lead.txt", confirmed: true });
    expect(r.error_code).toBe("BLOCKED");
    expect(existsSync(path)).toBe(true);
  });

  test("confirmation matches byte-for-byte: case is not folded", async () => {
    const path = victim("Case.txt");
    victim("case.txt");
    await s.call("bash", { command: "rm Case.txt" });
    const r = await s.call("bash", { command: "rm case.txt", confirmed: true });
    expect(r.error_code).toBe("BLOCKED");
    expect(existsSync(path)).toBe(true);
    expect(existsSync(join(s.cwd, "case.txt"))).toBe(true);
  });

  test("confirmation matches byte-for-byte: Unicode is not normalised (NFC ≠ NFD)", async () => {
    const nfc = "rm caf\u00e9.txt";
    const nfd = "rm cafe\u0301.txt";
    const path = victim("caf\u00e9.txt");
    await s.call("bash", { command: nfc });
    const r = await s.call("bash", { command: nfd, confirmed: true });
    expect(r.error_code).toBe("BLOCKED");
    expect(existsSync(path)).toBe(true);
    expect((await s.call("bash", { command: nfc, confirmed: true })).success).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  test("a refused mismatch does not consume the pending record of the exact command", async () => {
    const path = victim("keep.txt");
    await s.call("bash", { command: "rm keep.txt" });
    expect((await s.call("bash", { command: "rm keep.txt ", confirmed: true })).error_code).toBe("BLOCKED");
    const r = await s.call("bash", { command: "rm keep.txt", confirmed: true });
    expect(r.success).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  test("a pending request does not let a different, blocked command through", async () => {
    await s.call("bash", { command: "rm test.txt" });
    const r = await s.call("bash", { command: "rm -rf /", confirmed: true });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toStartWith("Command blocked");
  });

  test("asking twice then confirming runs once; a second confirmation is refused", async () => {
    const path = victim("twice.txt");
    await s.call("bash", { command: "rm twice.txt" });
    await s.call("bash", { command: "rm twice.txt" });
    expect((await s.call("bash", { command: "rm twice.txt", confirmed: true })).success).toBe(true);
    writeFileSync(path, "again");
    expect((await s.call("bash", { command: "rm twice.txt", confirmed: true })).error_code).toBe("BLOCKED");
    expect(existsSync(path)).toBe(true);
  });

  test("caution commands in the background go through the same confirmation", async () => {
    const path = victim("bgvictim.txt");
    const first = await s.call("bash", { command: "rm bgvictim.txt", run_in_background: true });
    expect(first.needs_confirmation).toBe(true);
    expect(existsSync(path)).toBe(true);
    const second = await s.call("bash", { command: "rm bgvictim.txt", run_in_background: true, confirmed: true });
    expect(second.status).toBe("running");
    const done = await s.call("task_output", { task_id: second.task_id, wait: true, timeout: 5 });
    expect(done.exit_code).toBe(0);
    expect(existsSync(path)).toBe(false);
  });

  test("records belong to one server process: a request in one server cannot be confirmed in another", async () => {
    const other = await startServer({ cwd: s.cwd });
    try {
      const path = victim("cross.txt");
      await s.call("bash", { command: "rm cross.txt" });
      const r = await other.call("bash", { command: "rm cross.txt", confirmed: true });
      expect(r.error_code).toBe("BLOCKED");
      expect(existsSync(path)).toBe(true);
    } finally {
      await other.close();
    }
  });

  test("SPEC false positives run without confirmation", async () => {
    for (const command of ["echo farm animal", "echo supper", "mkdir form", "echo remove"]) {
      const r = await s.call("bash", { command });
      expect(r.needs_confirmation).toBeUndefined();
      expect(r.exit_code).toBe(0);
    }
  });
});
