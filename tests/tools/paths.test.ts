/**
 * SPEC §3.1 working_directory and §6 allowed paths: relative paths against the cwd, symlinks
 * followed, ACCESS_DENIED / NOT_FOUND / INVALID_ARGUMENT naming the path, --allow and --cwd.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";

// Real processes on a shared 2-core machine: bun's 5 s default is too tight under load.
setDefaultTimeout(30_000);

let s: McpSession;
/** A directory outside the server's allowed paths. */
let outside: string;

beforeAll(async () => {
  s = await startServer();
  outside = realpathSync(mkdtempSync(join(tmpdir(), "as-test-outside-")));
  mkdirSync(join(s.cwd, "subdir"));
  mkdirSync(join(s.cwd, "a/b"), { recursive: true });
  writeFileSync(join(s.cwd, "plain.txt"), "x");
  symlinkSync(outside, join(s.cwd, "escape"));
  symlinkSync(join(s.cwd, "subdir"), join(s.cwd, "inner-link"));
});
afterAll(async () => {
  await s.close();
  rmSync(outside, { recursive: true, force: true });
});

describe("working_directory inside the allowed paths", () => {
  test("a relative subdir resolves against the server's cwd", async () => {
    const r = await s.call("bash", { command: "pwd", working_directory: "subdir" });
    expect(r.stdout).toBe(`${s.cwd}/subdir\n`);
  });

  test("a nested relative path works", async () => {
    const r = await s.call("bash", { command: "pwd", working_directory: "a/b" });
    expect(r.stdout).toBe(`${s.cwd}/a/b\n`);
  });

  test("'.' is the cwd itself", async () => {
    const r = await s.call("bash", { command: "pwd", working_directory: "." });
    expect(r.stdout).toBe(`${s.cwd}\n`);
  });

  test("an absolute path inside the cwd works", async () => {
    const r = await s.call("bash", { command: "pwd", working_directory: `${s.cwd}/subdir` });
    expect(r.stdout).toBe(`${s.cwd}/subdir\n`);
  });

  test("`subdir/../a` stays inside and works", async () => {
    const r = await s.call("bash", { command: "pwd", working_directory: "subdir/../a" });
    expect(r.stdout).toBe(`${s.cwd}/a\n`);
  });

  test("a symlink to a directory inside the allowed paths is accepted", async () => {
    const r = await s.call("bash", { command: "pwd -P", working_directory: "inner-link" });
    expect(r.stdout).toBe(`${s.cwd}/subdir\n`);
  });

  test("background commands use working_directory too", async () => {
    const { task_id } = await s.call("bash", { command: "pwd", working_directory: "subdir", run_in_background: true });
    const r = await s.call("task_output", { task_id, wait: true, timeout: 5 });
    expect(r.stdout).toBe(`${s.cwd}/subdir\n`);
  });
});

describe("working_directory refused", () => {
  test("'/tmp' when not allowed → ACCESS_DENIED 'outside allowed paths', naming the path, command not run", async () => {
    const raw = await s.callRaw("bash", { command: "touch ran-in-tmp-marker", working_directory: "/tmp" });
    const r = raw.structuredContent;
    expect(raw.isError).toBe(true);
    expect(r.error_code).toBe("ACCESS_DENIED");
    expect(r.error).toContain("outside allowed paths");
    expect(r.error).toContain("/tmp");
    expect(existsSync("/tmp/ran-in-tmp-marker")).toBe(false);
  });

  test("a relative path climbing out with '..' → ACCESS_DENIED", async () => {
    const r = await s.call("bash", { command: "pwd", working_directory: ".." });
    expect(r.error_code).toBe("ACCESS_DENIED");
    expect(r.error).toContain("outside allowed paths");
  });

  test("a symlink inside the cwd pointing outside is refused (symlinks are followed)", async () => {
    const r = await s.call("bash", { command: "pwd", working_directory: "escape" });
    expect(r.error_code).toBe("ACCESS_DENIED");
    expect(r.error).toContain("outside allowed paths");
    expect(r.error).toContain("escape");
  });

  test("a path through an escaping symlink (escape/sub) is refused", async () => {
    mkdirSync(join(outside, "sub"), { recursive: true });
    const r = await s.call("bash", { command: "pwd", working_directory: "escape/sub" });
    expect(r.error_code).toBe("ACCESS_DENIED");
  });

  test("a sibling whose name starts with the cwd's name is outside (no string-prefix match)", async () => {
    const sibling = `${s.cwd}-sibling`;
    mkdirSync(sibling);
    try {
      const r = await s.call("bash", { command: "pwd", working_directory: sibling });
      expect(r.error_code).toBe("ACCESS_DENIED");
    } finally {
      rmSync(sibling, { recursive: true, force: true });
    }
  });

  test("a nonexistent directory inside → NOT_FOUND naming the path", async () => {
    const raw = await s.callRaw("bash", { command: "pwd", working_directory: "no-such-dir" });
    expect(raw.isError).toBe(true);
    expect(raw.structuredContent.error_code).toBe("NOT_FOUND");
    expect(raw.structuredContent.error).toContain("no-such-dir");
  });

  test("a file instead of a directory → INVALID_ARGUMENT naming the path", async () => {
    const raw = await s.callRaw("bash", { command: "pwd", working_directory: "plain.txt" });
    expect(raw.isError).toBe(true);
    expect(raw.structuredContent.error_code).toBe("INVALID_ARGUMENT");
    expect(raw.structuredContent.error).toContain("plain.txt");
  });

  test("a nonexistent path outside is ACCESS_DENIED (the sandbox is checked first)", async () => {
    const r = await s.call("bash", { command: "pwd", working_directory: "/no/such/place" });
    expect(r.error_code).toBe("ACCESS_DENIED");
  });

  test("background commands are refused outside the allowed paths too", async () => {
    const r = await s.call("bash", { command: "pwd", working_directory: "/tmp", run_in_background: true });
    expect(r.error_code).toBe("ACCESS_DENIED");
  });

  test("the path check comes before confirmation: a caution command outside is ACCESS_DENIED", async () => {
    const r = await s.call("bash", { command: "rm whatever", working_directory: "/tmp" });
    expect(r.error_code).toBe("ACCESS_DENIED");
    expect(r.needs_confirmation).toBeUndefined();
  });
});

describe("--allow and --cwd", () => {
  test("--allow DIR lets working_directory use DIR and its subdirectories", async () => {
    const extra = realpathSync(mkdtempSync(join(tmpdir(), "as-test-allow-")));
    mkdirSync(join(extra, "deep"));
    const t = await startServer({ args: ["--allow", extra] });
    try {
      expect((await t.call("bash", { command: "pwd", working_directory: extra })).stdout).toBe(`${extra}\n`);
      expect((await t.call("bash", { command: "pwd", working_directory: `${extra}/deep` })).stdout).toBe(`${extra}/deep\n`);
      expect((await t.call("bash", { command: "pwd", working_directory: outside })).error_code).toBe("ACCESS_DENIED");
    } finally {
      await t.close();
      rmSync(extra, { recursive: true, force: true });
    }
  });

  test("--allow is repeatable", async () => {
    const one = realpathSync(mkdtempSync(join(tmpdir(), "as-test-allow1-")));
    const two = realpathSync(mkdtempSync(join(tmpdir(), "as-test-allow2-")));
    const t = await startServer({ args: ["--allow", one, "--allow", two] });
    try {
      expect((await t.call("bash", { command: "pwd", working_directory: one })).stdout).toBe(`${one}\n`);
      expect((await t.call("bash", { command: "pwd", working_directory: two })).stdout).toBe(`${two}\n`);
    } finally {
      await t.close();
      rmSync(one, { recursive: true, force: true });
      rmSync(two, { recursive: true, force: true });
    }
  });

  test("--allow given through a symlink still matches the real directory", async () => {
    const real = realpathSync(mkdtempSync(join(tmpdir(), "as-test-allowreal-")));
    const link = `${real}-link`;
    symlinkSync(real, link);
    const t = await startServer({ args: ["--allow", link] });
    try {
      expect((await t.call("bash", { command: "pwd -P", working_directory: real })).stdout).toBe(`${real}\n`);
      expect((await t.call("bash", { command: "pwd -P", working_directory: link })).stdout).toBe(`${real}\n`);
    } finally {
      await t.close();
      rmSync(link, { force: true });
      rmSync(real, { recursive: true, force: true });
    }
  });

  test("--cwd DIR sets the server's cwd, the default working directory and the base of relative paths", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "as-test-cwdflag-")));
    mkdirSync(join(dir, "inside"));
    const t = await startServer({ args: ["--cwd", dir] });
    try {
      expect((await t.call("bash", { command: "pwd" })).stdout).toBe(`${dir}\n`);
      expect((await t.call("bash", { command: "pwd", working_directory: "inside" })).stdout).toBe(`${dir}/inside\n`);
      // The launch directory is no longer allowed: only --cwd is.
      expect((await t.call("bash", { command: "pwd", working_directory: t.cwd })).error_code).toBe("ACCESS_DENIED");
    } finally {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
