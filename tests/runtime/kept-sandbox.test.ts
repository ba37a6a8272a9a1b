/**
 * SPEC §18: a sandbox kept per policy, and commands started in it at the price of a spawn
 * (runtime/containment/kept-sandbox.ts, runtime/local/served-spawn.ts, runtime/spawn-helper/). A kept sandbox
 * is reused by every command of its policy, made anew when the roots change, invisible to
 * another policy's commands, and gone with the server; the spawner kept in it is invisible to
 * the commands it starts. Driven through the compiled binary over MCP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { processes, processesMatching, uniqueSleep, waitForExec, waitNoProcess } from "../helpers/procs.ts";

let work: string;
let s: McpSession;
/** A hidden path (sandbox_deny_read) that does not exist when the server starts. */
let laterSecret: string;

/** The namespaces and task cgroup a command runs in, as it sees them. */
const WHERE = "readlink /proc/self/ns/mnt /proc/self/ns/pid; grep '^0::' /proc/self/cgroup";

/** Processes of `server`'s kept sandboxes: bwrap and the `hold` it runs as the sandbox's first process. */
const keptOf = (server: number) => processes().filter((p) => (p.cmdline.includes("/proc/self/fd/4 hold") || p.cmdline.includes("--as-pid-1")) && descendsFrom(p.pid, server));

/** `server`'s spawners (agent-shell-helper serve), each a child of the server. */
const spawnersOf = (server: number) => processes().filter((p) => p.ppid === server && p.cmdline.includes("agent-shell-helper") && p.cmdline.includes(" serve "));

/** The parent pid of `pid`, as the host sees it. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

function descendsFrom(pid: number, ancestor: number): boolean {
  const all = new Map(processes().map((p) => [p.pid, p.ppid]));
  for (let p = pid; p > 1; p = all.get(p) ?? 0) if (p === ancestor) return true;
  return false;
}

async function untilGone(find: () => unknown[], ms = 3000): Promise<unknown[]> {
  const deadline = Date.now() + ms;
  while (find().length && Date.now() < deadline) await Bun.sleep(20);
  return find();
}

beforeAll(async () => {
  work = realpathSync(mkdtempSync("/var/tmp/as-kept-"));
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

describe("a kept sandbox per policy", () => {
  test("commands of one policy share its namespaces, each in a task cgroup of its own", async () => {
    const running = await s.call("bash", { command: `${WHERE}; sleep ${uniqueSleep(440)}`, run_in_background: true });
    let a = await s.call("task_output", { task_id: running.task_id });
    for (const deadline = Date.now() + 5000; !a.stdout.includes("0::") && Date.now() < deadline; await Bun.sleep(10)) {
      a = await s.call("task_output", { task_id: running.task_id });
    }
    const b = await s.call("bash", { command: WHERE });
    await s.call("kill_shell", { task_id: running.task_id });
    const [mntA, pidA, cgA] = a.stdout.trim().split("\n");
    const [mntB, pidB, cgB] = b.stdout.trim().split("\n");
    expect({ mnt: mntB, pid: pidB }).toEqual({ mnt: mntA, pid: pidA });
    expect(mntA).not.toBe(readlinkSync("/proc/self/ns/mnt")); // not the host's
    expect(cgA).toMatch(/^0::\/agent-shell-\d+\/task-\d+$/);
    expect(cgB).not.toBe(cgA);
    expect(keptOf(s.pid).filter((p) => p.cmdline.startsWith("/proc/self/fd/4 hold"))).toHaveLength(1);
  });

  test("a fresh server makes its default sandbox and spawner before the first command, which then runs in them", async () => {
    for (const args of [[], ["--sandbox", "off"]]) {
      const t = await startServer({ cwd: work, args });
      try {
        const sandboxed = args.length === 0;
        // No call yet: what the first command needs is made once initialize has been answered.
        const ready = () => spawnersOf(t.pid).length === 1 && (!sandboxed || keptOf(t.pid).some((p) => p.cmdline.startsWith("/proc/self/fd/4 hold")));
        for (const deadline = Date.now() + 5000; !ready() && Date.now() < deadline; await Bun.sleep(10));
        expect(ready()).toBe(true);
        const spawner = spawnersOf(t.pid)[0]!.pid;
        const hold = keptOf(t.pid).find((p) => p.cmdline.startsWith("/proc/self/fd/4 hold"));
        const task = await t.call("bash", { command: `sleep ${uniqueSleep(455)}`, run_in_background: true });
        expect(parentOf(task.pid)).toBe(spawner);
        const ns = (await t.call("bash", { command: "readlink /proc/self/ns/mnt" })).stdout.trim();
        expect(ns).toBe(readlinkSync(`/proc/${hold?.pid ?? "self"}/ns/mnt`));
        expect(spawnersOf(t.pid).map((p) => p.pid)).toEqual([spawner]);
        await t.call("kill_shell", { task_id: task.task_id });
      } finally {
        await t.close();
      }
    }
  });

  test("another policy gets a sandbox of its own, in which it cannot see or signal the first one's commands", async () => {
    const m = uniqueSleep(440);
    const task = await s.call("bash", { command: `sleep ${m}`, run_in_background: true });
    await waitForExec(`sleep ${m}`);
    // (pgrep -x: by the program's name, so the shell whose command line names it is not found.)
    const own = (await s.call("bash", { command: `${WHERE}; pgrep -x sleep || echo unseen` })).stdout.trim().split("\n");
    const attempt = { command: `${WHERE}; pgrep -x sleep || echo unseen; pkill -KILL -x sleep; echo done`, sandbox: "read-only" };
    expect((await s.call("bash", attempt)).needs_confirmation).toBe(true); // pkill is confirmed first
    const other = (await s.call("bash", { ...attempt, confirmed: true })).stdout.trim().split("\n");
    expect(own[3]).toMatch(/^\d+$/); // same policy: the same pid namespace
    expect(other[0]).not.toBe(own[0]); // another mount namespace
    expect(other[1]).not.toBe(own[1]); // and pid namespace
    expect(other.slice(3)).toEqual(["unseen", "done"]);
    expect(processesMatching(`sleep ${m}`)).toHaveLength(1); // still running
    expect((await s.call("kill_shell", { task_id: task.task_id })).status).toBe("killed");
  });

  test("a writable root removed and made again gets a new sandbox, and the write lands in the new directory", async () => {
    const root = realpathSync(mkdtempSync("/var/tmp/as-kept-root-"));
    const t = await startServer({ cwd: work, args: ["--allow", root] });
    try {
      const seenInside = async () => (await t.call("bash", { command: `stat -c %i ${root}` })).stdout.trim();
      expect(await seenInside()).toBe(String(statSync(root).ino));
      rmSync(root, { recursive: true });
      mkdirSync(root);
      // (Not the mount namespace's id: the kernel may give a new sandbox the number its predecessor just freed.)
      expect(await seenInside()).toBe(String(statSync(root).ino));
      const r = await t.call("bash", { command: `echo made > ${root}/file && cat ${root}/file` });
      expect(r.stdout).toBe("made\n");
      expect(readFileSync(join(root, "file"), "utf8")).toBe("made\n");
    } finally {
      await t.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("a hidden path created after the sandbox was built is hidden from the next command", async () => {
    await s.call("bash", { command: "true" });
    expect(spawnersOf(s.pid).length).toBeGreaterThan(0); // the sandbox and its spawner are kept
    mkdirSync(laterSecret);
    writeFileSync(join(laterSecret, "key"), "LATER-SECRET\n");
    try {
      const r = await s.call("bash", { command: `cat ${laterSecret}/key` });
      expect(r.exit_code).not.toBe(0);
      expect(r.stdout).not.toContain("LATER-SECRET");
    } finally {
      rmSync(laterSecret, { recursive: true, force: true });
    }
  });

  test("nothing of it outlives the server: a normal exit ends the sandbox and its spawner", async () => {
    const t = await startServer({ cwd: work });
    await t.call("bash", { command: "true" });
    const kept = keptOf(t.pid).map((p) => p.pid);
    const spawners = spawnersOf(t.pid).map((p) => p.pid);
    expect(kept.length).toBeGreaterThan(0);
    expect(spawners.length).toBe(1);
    await t.close();
    expect(await untilGone(() => processes().filter((p) => [...kept, ...spawners].includes(p.pid)))).toEqual([]);
  });

  test("nothing of it outlives a SIGKILL of the server: the watchdog ends the sandbox and what runs in it", async () => {
    const t = await startServer({ cwd: work });
    const m = uniqueSleep(450);
    await t.call("bash", { command: `setsid -f sleep ${m}; sleep ${m}`, run_in_background: true });
    const deadline = Date.now() + 5000;
    while (processesMatching(`sleep ${m}`).length < 2 && Date.now() < deadline) await Bun.sleep(10);
    const kept = [...keptOf(t.pid), ...spawnersOf(t.pid)].map((p) => p.pid);
    expect(kept.length).toBeGreaterThan(1);
    process.kill(t.pid, "SIGKILL");
    await t.close().catch(() => {});
    expect(await waitNoProcess(`sleep ${m}`, 3000)).toEqual([]);
    expect(await untilGone(() => processes().filter((p) => kept.includes(p.pid)))).toEqual([]);
  });

  test("a server killed with its watchdog while its spawner is busy leaves nothing behind", async () => {
    const dir = realpathSync(mkdtempSync("/var/tmp/as-kept-crash-"));
    const servers: number[] = [];
    const left = () => processes().filter((p) => p.cmdline.includes(dir) || servers.some((pid) => p.cmdline.includes(`agent-shell-${pid}/`)));
    try {
      for (let i = 0; i < 12; i++) {
        const t = await startServer({ cwd: dir });
        servers.push(t.pid);
        await t.call("bash", { command: "true" });
        await Bun.sleep(i % 6);
        const watchdogs = processes().filter((p) => p.ppid === t.pid && p.cmdline.includes("agent-shell-watchdog"));
        process.kill(t.pid, "SIGKILL");
        for (const w of watchdogs) process.kill(w.pid, "SIGKILL");
        await t.close().catch(() => {});
      }
      // A spawner whose server died reads end-of-file on its control socket, and so does a sandbox's first process.
      expect(await untilGone(left)).toEqual([]);
    } finally {
      for (const p of left()) process.kill(p.pid, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 45_000); // twelve servers started and killed one after another, on a loaded machine
});

describe("the spawner kept per sandbox", () => {
  // What a command inherits from the process that starts it: signal dispositions and mask, open fds, session.
  const INHERITED = "grep -E '^(SigBlk|SigIgn|SigCgt):' /proc/self/status; ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; ps -o pid=,pgid=,sid= -p $$ | awk '{print ($1==$2 && $2==$3) ? \"leads its session\" : \"does not lead\"}'";
  const PROBE = 'echo "shlvl=$SHLVL"; pwd; readlink /proc/self/fd/0; exit 7';

  for (const [name, args, env] of [
    ["sandboxed (namespaces)", [], {}],
    ["--sandbox off", ["--sandbox", "off"], {}],
    ["the Landlock level", [], { AGENT_SHELL_SANDBOX_LEVEL: "landlock" }],
  ] as const) {
    test(`${name}: one spawner starts every command, as its child, each looking like a fresh \`bash -c\``, async () => {
      const t = await startServer({ cwd: work, args: [...args], env: { ...env } });
      try {
        const reference = Bun.spawnSync(["setsid", "bash", "-c", INHERITED], { stdin: "ignore" }).stdout.toString();
        const direct = Bun.spawnSync(["bash", "-c", PROBE], { cwd: work, stdin: "ignore" });
        for (let i = 0; i < 3; i++) {
          const r = await t.call("bash", { command: INHERITED });
          expect(r.stdout).toBe(reference);
          const probe = await t.call("bash", { command: PROBE });
          expect([probe.exit_code, probe.stdout]).toEqual([direct.exitCode, direct.stdout.toString()]);
        }
        const task = await t.call("bash", { command: `sleep ${uniqueSleep(450)}`, run_in_background: true });
        const spawners = spawnersOf(t.pid);
        expect(spawners).toHaveLength(1);
        expect(parentOf(task.pid)).toBe(spawners[0]!.pid);
        await t.call("kill_shell", { task_id: task.task_id });
      } finally {
        await t.close();
      }
    });
  }

  test("a variable given to one call is not seen by the next; BASH_ENV is sourced once, by the command's bash", async () => {
    const rc = join(work, "bash-env.sh");
    writeFileSync(rc, "echo sourced\n");
    const probe = 'echo "one=${AS_ONE-unset}"';
    const run = async (env?: Record<string, string>) => (await s.call("bash", { command: probe, ...(env ? { env } : {}) })).stdout;
    expect(await run({ AS_ONE: "1", BASH_ENV: rc })).toBe("sourced\none=1\n");
    expect(await run()).toBe("one=unset\n");
    expect(await run({ AS_ONE: "2" })).toBe("one=2\n");
    rmSync(rc);
  });

  test("stdin text, a large command and another working directory reach the command; one too large for a message starts anyway", async () => {
    const r = await s.call("bash", { command: "pwd; cat", stdin: "fed\n", working_directory: join(work, "sub") });
    expect(r.stdout).toBe(`${join(work, "sub")}\nfed\n`);
    for (const size of [70_000, 130_000]) {
      const long = "x".repeat(size);
      expect((await s.call("bash", { command: `s=${long}; echo \${#s}` })).stdout).toBe(`${size}\n`);
    }
  });

  test("a spawner killed under its commands: they end as lost, nothing of them is left, and the next command gets a new spawner", async () => {
    const t = await startServer({ cwd: work });
    try {
      const m = uniqueSleep(470);
      const task = await t.call("bash", { command: `setsid -f sleep ${m}; sleep ${m}`, run_in_background: true });
      const deadline = Date.now() + 5000;
      while (processesMatching(`sleep ${m}`).length < 2 && Date.now() < deadline) await Bun.sleep(10);
      const [spawner] = spawnersOf(t.pid);
      process.kill(spawner!.pid, "SIGKILL");
      const out = await t.call("task_output", { task_id: task.task_id, wait: true, timeout: 10 });
      expect(out.status).toBe("lost");
      expect(out.lost_reason).toContain("spawner");
      expect(await waitNoProcess(`sleep ${m}`, 3000)).toEqual([]);
      expect((await t.call("bash", { command: "echo again" })).stdout).toBe("again\n");
      expect(spawnersOf(t.pid).map((p) => p.pid)).not.toContain(spawner!.pid);
    } finally {
      await t.close();
    }
  });
});
