/**
 * The basic command line (SPEC §1 and §8): `--version`, `--help`,
 * `call TOOL [JSON|-]` with its exit codes, and a binary that needs no Bun/Node/node_modules.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../helpers/mcp.ts";

// Real processes on a shared 2-core machine: bun's 5 s default is too tight under load.
setDefaultTimeout(30_000);

let dir: string;
let stateDir: string;

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "as-test-cli-")));
  stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-test-cli-state-")));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(stateDir, { recursive: true, force: true });
});

function run(args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) {
  const p = Bun.spawnSync([BINARY, ...args], {
    cwd: dir,
    stdin: opts.stdin !== undefined ? Buffer.from(opts.stdin) : "ignore",
    env: opts.env ?? { ...process.env, AGENT_SHELL_STATE_DIR: stateDir },
  });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

describe("agent-shell CLI basics", () => {
  test("--version prints the version and exits 0", () => {
    const r = run(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\d+\.\d+\.\d+/);
  });

  test("--help lists the mcp and call verbs and exits 0", () => {
    const r = run(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("mcp");
    expect(r.stdout).toContain("call");
  });

  test("call bash JSON prints the result JSON and exits 0", () => {
    const r = run(["call", "bash", '{"command": "echo hello"}', "--state-dir", stateDir]);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.stdout).toBe("hello\n");
    expect(result.success).toBe(true);
  });

  test("call reads the arguments from stdin with '-'", () => {
    const r = run(["call", "bash", "-", "--state-dir", stateDir], { stdin: '{"command": "echo from-stdin"}' });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).stdout).toBe("from-stdin\n");
  });

  test("call exits 1 when the result is an error, still printing it", () => {
    const r = run(["call", "bash", "{}", "--state-dir", stateDir]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error_code).toBe("INVALID_ARGUMENT");
  });

  test("a failing command is a result, not an error: call exits 0", () => {
    const r = run(["call", "bash", '{"command": "exit 3"}', "--state-dir", stateDir]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).exit_code).toBe(3);
  });

  test("call with malformed JSON is a usage error: exit 2 and a message on stderr", () => {
    const r = run(["call", "bash", "{nope", "--state-dir", stateDir]);
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeGreaterThan(0);
    expect(r.stdout).toBe("");
  });

  test("an unknown verb is a usage error: exit 2", () => {
    const r = run(["frobnicate"]);
    expect(r.code).toBe(2);
  });

  test("mcp --timeout 0 is a usage error naming --timeout: exit 2", () => {
    const r = run(["mcp", "--timeout", "0", "--state-dir", stateDir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--timeout");
  });

  test("an unknown mcp flag is a usage error: exit 2", () => {
    const r = run(["mcp", "--no-such-flag", "--state-dir", stateDir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no-such-flag");
  });

  test("the binary runs with no Bun, Node or node_modules reachable", () => {
    const bin = join(dir, "bin");
    require("node:fs").mkdirSync(bin);
    for (const tool of ["bash", "echo", "cat"]) symlinkSync(`/bin/${tool}`, join(bin, tool));
    const r = run(["call", "bash", '{"command": "command -v bun node || echo none"}', "--state-dir", stateDir], {
      env: { PATH: bin, HOME: dir },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).stdout).toBe("none\n");
  });
});
