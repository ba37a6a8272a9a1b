/**
 * Sandboxes built ahead of their command (runtime/warm-sandbox.ts): the first sandboxed call
 * of a policy starts bwrap the usual way, later ones run in a sandbox built beforehand. A
 * command must not be able to tell the difference, and nothing may be hidden less.
 * Driven through the compiled binary over MCP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type McpSession } from "./helpers/mcp.ts";
import { processes } from "./helpers/procs.ts";

let work: string;
let s: McpSession;
/** A hidden path (sandbox_deny_read) that does not exist when the server starts. */
let laterSecret: string;

/** What the launcher of a sandbox waiting for its command runs. */
const WAITING = "-c . /dev/fd/3; exit 125";
const waiting = (server: number) => processes().filter((p) => p.cmdline.includes(WAITING) && descendsFrom(p.pid, server));

function descendsFrom(pid: number, ancestor: number): boolean {
  const all = new Map(processes().map((p) => [p.pid, p.ppid]));
  for (let p = pid; p > 1; p = all.get(p) ?? 0) if (p === ancestor) return true;
  return false;
}

async function untilWaiting(server: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (waiting(server).length === 0) {
    if (Date.now() > deadline) throw new Error("no sandbox was built ahead");
    await Bun.sleep(10);
  }
}

beforeAll(async () => {
  work = realpathSync(mkdtempSync("/var/tmp/as-warm-cwd-"));
  mkdirSync(join(work, "sub"));
  laterSecret = join(work, "later-secret");
  const config = join(work, "config.toml");
  writeFileSync(config, `sandbox_deny_read = ["${laterSecret}"]\n`);
  s = await startServer({ cwd: work, args: ["--config", config] });
});

afterAll(async () => {
  await s?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("a sandbox built ahead", () => {
  // Environment (SHLVL, PWD, OLDPWD included), directory, stdin, a fresh pid namespace (the
  // command is pid 2 under bwrap's init), exit status: everything a command can see.
  const PROBE = 'env | sort; echo "shlvl=$SHLVL pid=$$"; pwd; readlink /proc/self/fd/0; ps -e --no-headers | wc -l; exit 7';

  test("a command cannot tell it from a sandbox built for it: same environment, directory, stdin, pid namespace", async () => {
    const first = await s.call("bash", { command: PROBE });
    expect(first.exit_code).toBe(7);
    expect(first.stdout).toContain("pid=2\n");
    await untilWaiting(s.pid);
    for (let i = 0; i < 3; i++) {
      const later = await s.call("bash", { command: PROBE });
      expect(later).toEqual({ ...first, duration_ms: later.duration_ms });
    }
  });

  test("stdin text and another working directory reach the command", async () => {
    await untilWaiting(s.pid);
    const r = await s.call("bash", { command: "pwd; cat", stdin: "fed\n", working_directory: join(work, "sub") });
    expect(r.stdout).toBe(`${join(work, "sub")}\nfed\n`);
  });

  test("a hidden path created after the sandbox was built is hidden from the next command", async () => {
    await s.call("bash", { command: "true" });
    await untilWaiting(s.pid);
    mkdirSync(laterSecret);
    writeFileSync(join(laterSecret, "key"), "LATER-SECRET\n");
    const r = await s.call("bash", { command: `cat ${laterSecret}/key` });
    expect(r.exit_code).not.toBe(0);
    expect(r.stdout).not.toContain("LATER-SECRET");
    rmSync(laterSecret, { recursive: true, force: true });
  });

  test("a command too large for the launcher still runs, started the usual way", async () => {
    await untilWaiting(s.pid);
    const long = "x".repeat(70_000);
    const r = await s.call("bash", { command: `s=${long}; echo \${#s}` });
    expect(r.stdout).toBe("70000\n");
  });

  test("a sandbox kept waiting ends with the server", async () => {
    const other = await startServer({ cwd: work });
    await other.call("bash", { command: "true" });
    await untilWaiting(other.pid);
    const pid = other.pid;
    const launchers = waiting(pid).map((p) => p.pid);
    await other.close();
    const deadline = Date.now() + 3000;
    const alive = () => processes().filter((p) => launchers.includes(p.pid));
    while (alive().length && Date.now() < deadline) await Bun.sleep(20);
    expect(alive()).toEqual([]);
  });
});
