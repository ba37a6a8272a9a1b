/**
 * Launchers started ahead of their command (runtime/warm-launcher.ts): the first sandboxed
 * call of a policy starts bwrap the usual way, later ones run in a sandbox built beforehand;
 * with `--sandbox off`, a command after a quiet moment runs in a launcher already moved into
 * a task cgroup of its own. A command must not be able to tell the difference, nothing may
 * be hidden less, and containment stays exact. Driven through the compiled binary over MCP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type McpSession } from "./helpers/mcp.ts";
import { processes, uniqueSleep, waitNoProcess } from "./helpers/procs.ts";

let work: string;
let s: McpSession;
/** A hidden path (sandbox_deny_read) that does not exist when the server starts. */
let laterSecret: string;

/** What the launcher of a sandbox waiting for its command runs. */
const WAITING = "-c . /dev/fd/3; exit 125";
const waiting = (server: number) => processes().filter((p) => p.cmdline.includes(WAITING) && descendsFrom(p.pid, server));
/** An unsandboxed launcher once it sits in its own task cgroup (moved there after it started). */
const placed = (pid: number) => /\/agent-shell-\d+\/task-\d+$/m.test(readFileSync(`/proc/${pid}/cgroup`, "utf8"));

function descendsFrom(pid: number, ancestor: number): boolean {
  const all = new Map(processes().map((p) => [p.pid, p.ppid]));
  for (let p = pid; p > 1; p = all.get(p) ?? 0) if (p === ancestor) return true;
  return false;
}

async function untilWaiting(server: number, count = 1): Promise<void> {
  const deadline = Date.now() + 5000;
  while (waiting(server).length < count) {
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

  test("a launcher starts with the last command's environment: a variable given to one call is not seen by the next", async () => {
    // BASH_ENV is sourced once, by the command's own bash, as in a direct start.
    const rc = join(work, "bash-env.sh");
    writeFileSync(rc, "echo sourced\n");
    const probe = 'echo "one=${AS_ONE-unset}"';
    const run = async (env?: Record<string, string>) => {
      await untilWaiting(s.pid, 2); // both waiting launchers were started after the previous call
      return (await s.call("bash", { command: probe, ...(env ? { env } : {}) })).stdout;
    };
    await s.call("bash", { command: "true" });
    for (let i = 0; i < 2; i++) {
      expect(await run({ AS_ONE: "1", BASH_ENV: rc })).toBe("sourced\none=1\n");
      expect(await run({ AS_ONE: "1", BASH_ENV: rc })).toBe("sourced\none=1\n");
      expect(await run()).toBe("one=unset\n");
      expect(await run({ AS_ONE: `${i + 2}` })).toBe(`one=${i + 2}\n`);
    }
    rmSync(rc);
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

  test("a writable root removed and made again is the new directory for the next command", async () => {
    const root = realpathSync(mkdtempSync("/var/tmp/as-warm-root-"));
    const t = await startServer({ cwd: work, args: ["--allow", root] });
    try {
      await t.call("bash", { command: "true" });
      await untilWaiting(t.pid);
      rmSync(root, { recursive: true });
      mkdirSync(root);
      const r = await t.call("bash", { command: `echo made > ${root}/file && cat ${root}/file` });
      expect(r).toMatchObject({ stdout: "made\n", exit_code: 0 });
      expect(readFileSync(join(root, "file"), "utf8")).toBe("made\n");
    } finally {
      await t.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("a server killed with its watchdog while sandboxes are being built leaves none behind", async () => {
    // The launchers start a moment after each call: kill the whole tree at spread-out
    // moments around that, so some kills land while bwrap is still setting one up.
    const dir = realpathSync(mkdtempSync("/var/tmp/as-warm-crash-"));
    try {
      for (let i = 0; i < 12; i++) {
        const t = await startServer({ cwd: dir });
        await t.call("bash", { command: "true" });
        await Bun.sleep(i % 6);
        const watchdogs = processes().filter((p) => p.ppid === t.pid && p.cmdline.includes("agent-shell-watchdog"));
        process.kill(t.pid, "SIGKILL");
        for (const w of watchdogs) process.kill(w.pid, "SIGKILL");
        await t.close().catch(() => {});
      }
      // A launcher whose server died reads end-of-file and exits: give them that moment.
      const deadline = Date.now() + 3000;
      const left = () => processes().filter((p) => p.cmdline.includes(dir));
      while (left().length && Date.now() < deadline) await Bun.sleep(20);
      expect(left()).toEqual([]);
    } finally {
      for (const p of processes().filter((p) => p.cmdline.includes(dir))) process.kill(p.pid, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
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

describe("unsandboxed (--sandbox off): a launcher already in its task cgroup", () => {
  let off: McpSession;
  beforeAll(async () => {
    off = await startServer({ cwd: work, args: ["--sandbox", "off"] });
  });
  afterAll(async () => {
    await off?.close();
  });

  /** The launchers waiting now, once each sits in its own task cgroup. */
  async function placedLaunchers(): Promise<number[]> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const ready = waiting(off.pid).filter((p) => placed(p.pid)).map((p) => p.pid);
      if (ready.length) return ready;
      if (Date.now() > deadline) throw new Error("no launcher was moved into a task cgroup");
      await Bun.sleep(10);
    }
  }

  test("after a quiet moment a background task starts in a waiting launcher, and what it started still dies with it", async () => {
    await off.call("bash", { command: "true" });
    // The usual start is used right after a cgroup move (the next move is cheap then), so
    // a task only takes a launcher after ~20 ms without one: try a few, spaced out.
    let claimed = false;
    for (let i = 0; i < 5 && !claimed; i++) {
      const ready = await placedLaunchers();
      await Bun.sleep(60);
      const m = uniqueSleep(430);
      const task = await off.call("bash", { command: `setsid -f sleep ${m}; sleep ${m}`, run_in_background: true });
      const deadline = Date.now() + 5000;
      while (processes().filter((p) => p.cmdline === `sleep ${m}`).length < 2 && Date.now() < deadline) await Bun.sleep(10);
      claimed = ready.includes(task.pid);
      expect((await off.call("kill_shell", { task_id: task.task_id })).status).toBe("killed");
      expect(await waitNoProcess(`sleep ${m}`, 1000)).toEqual([]);
    }
    expect(claimed).toBe(true);
  });

  test("a command cannot tell a launcher from the usual start: same environment, directory and stdin", async () => {
    const probe = 'env | sort; echo "shlvl=$SHLVL"; pwd; readlink /proc/self/fd/0; exit 7';
    const results = [];
    for (let i = 0; i < 3; i++) {
      await placedLaunchers();
      await Bun.sleep(60);
      results.push(await off.call("bash", { command: probe }));
      results.push(await off.call("bash", { command: probe })); // right after: the usual start
    }
    for (const r of results) expect(r).toEqual({ ...results[0], duration_ms: r.duration_ms });
    expect(results[0].exit_code).toBe(7);
  });
});
