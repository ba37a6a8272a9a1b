/**
 * Landlock launchers restricted ahead (runtime/warm-launcher.ts): at the Landlock level —
 * the far side's usual level inside containers (SPEC §16) — each command otherwise pays a
 * re-execution of this binary to restrict itself. A launcher made ahead must be invisible
 * to the command, and contain it exactly as a direct start does. The level is forced here
 * (AGENT_SHELL_SANDBOX_LEVEL=landlock) since this machine also has bubblewrap.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startServer, type McpSession } from "./helpers/mcp.ts";
import { processes } from "./helpers/procs.ts";

let work: string;
let s: McpSession;

/** What a Landlock launcher waiting for its command runs (its script comes on stdin: __sandbox-exec passes on fds 0–2 only). */
const WAITING = "-c . /dev/stdin; exit 125";

function waiting(server: number): number[] {
  const all = processes();
  const parent = new Map(all.map((p) => [p.pid, p.ppid]));
  const under = (pid: number) => {
    for (let p = pid; p > 1; p = parent.get(p) ?? 0) if (p === server) return true;
    return false;
  };
  return all.filter((p) => p.cmdline.includes(WAITING) && under(p.pid)).map((p) => p.pid);
}

async function untilWaiting(server: number): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = waiting(server);
    if (found.length > 0) return found;
    if (Date.now() > deadline) throw new Error("no Landlock launcher was made ahead");
    await Bun.sleep(10);
  }
}

beforeAll(async () => {
  work = realpathSync(mkdtempSync("/var/tmp/as-warm-ll-"));
  mkdirSync(join(work, "sub"));
  s = await startServer({ cwd: work, env: { AGENT_SHELL_SANDBOX_LEVEL: "landlock" } });
});

afterAll(async () => {
  await s?.close();
  rmSync(work, { recursive: true, force: true });
});

// Environment (SHLVL, PWD, OLDPWD included), directory, stdin, exit status, and the sandbox's verdict on a write.
const PROBE = 'env | sort; echo "shlvl=$SHLVL"; pwd; readlink /proc/self/fd/0; touch /etc/as-warm-ll 2>&1; exit 7';

test("a command in a launcher restricted ahead sees what a direct start gives it, and is contained the same", async () => {
  const first = await s.call("bash", { command: PROBE });
  expect(first).toMatchObject({ exit_code: 7, sandbox_level: "landlock" });
  expect(first.stdout).toContain("Permission denied");
  for (let i = 0; i < 3; i++) {
    const launchers = await untilWaiting(s.pid);
    const later = await s.call("bash", { command: `echo "pid=$$"; ${PROBE}` });
    const pid = Number(/^pid=(\d+)\n/.exec(later.stdout)![1]);
    expect(launchers).toContain(pid); // it ran in a launcher made ahead
    expect({ ...later, command: PROBE, stdout: later.stdout.replace(/^pid=\d+\n/, ""), duration_ms: 0 }).toEqual({ ...first, duration_ms: 0 });
  }
});

test("a command given stdin starts the usual way and gets it", async () => {
  await untilWaiting(s.pid);
  const r = await s.call("bash", { command: "cat", stdin: "fed\n" });
  expect(r).toMatchObject({ stdout: "fed\n", exit_code: 0 });
});

test("another working directory reaches the command", async () => {
  await untilWaiting(s.pid);
  const r = await s.call("bash", { command: "pwd", working_directory: join(work, "sub") });
  expect(r.stdout).toBe(`${join(work, "sub")}\n`);
});

test("a writable root removed and made again is the new directory for the next command (the launcher's rules held the old one)", async () => {
  const root = realpathSync(mkdtempSync("/var/tmp/as-warm-ll-root-"));
  const t = await startServer({ cwd: work, args: ["--allow", root], env: { AGENT_SHELL_SANDBOX_LEVEL: "landlock" } });
  try {
    await t.call("bash", { command: "true" });
    await untilWaiting(t.pid);
    rmSync(root, { recursive: true });
    mkdirSync(root);
    const r = await t.call("bash", { command: `echo made > ${root}/file && cat ${root}/file` });
    expect(r).toMatchObject({ stdout: "made\n", exit_code: 0 });
  } finally {
    await t.close();
    rmSync(root, { recursive: true, force: true });
  }
});
