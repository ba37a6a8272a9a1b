/**
 * SPEC §14 state dir hardening, against the compiled binary: a state dir owned by another
 * user or writable by group/others is refused with a message naming it; files are 0600 and
 * folders 0700 even under umask 000; links planted in the state dir change no file outside
 * it; a forged meta.json pointing at a process the test started signals nothing.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { alive, BINARY, startServer, waitForExit, type McpSession } from "../helpers/mcp.ts";
import { tempDir } from "../proof/helpers.ts";

setDefaultTimeout(60_000);

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function session(stateDir: string, args: string[] = []): Promise<McpSession> {
  const s = await startServer({ stateDir, args });
  cleanup.push(() => s.close());
  return s;
}

/** Runs `agent-shell mcp` on a state dir that should be refused: exit status and stderr. */
async function refusedStart(stateDir: string, args: string[] = []): Promise<{ code: number; stderr: string }> {
  // stdin at EOF: a server that does start ends at once (exit 0) instead of waiting.
  const p = Bun.spawn([BINARY, "mcp", "--state-dir", stateDir, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  return { code, stderr };
}

describe("a state dir others could write to is refused", () => {
  test("group-writable: exit 1, the message names the dir and says what to do", async () => {
    const dir = scratch("as-state-gw-");
    chmodSync(dir, 0o770);
    const r = await refusedStart(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`state dir ${dir} is writable by its group`);
    expect(r.stderr).toContain("chmod go-w");
  });

  test("owned by another user (nobody): exit 1, the message names the dir and the owner", async () => {
    const dir = scratch("as-state-foreign-");
    chownSync(dir, 65534, 65534);
    const r = await refusedStart(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`state dir ${dir} is owned by uid 65534`);
  });

  test("a foreign owner folder inside our state dir is refused too", async () => {
    const dir = scratch("as-state-owners-");
    mkdirSync(join(dir, "owners"), { mode: 0o777 });
    chmodSync(join(dir, "owners"), 0o777);
    const r = await refusedStart(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`owner folder ${join(dir, "owners")} is writable by its group and others`);
  });
});

describe("private modes whatever the umask", () => {
  test("under umask 000 every file is 0600 and every folder 0700", async () => {
    const stateDir = join(scratch("as-state-umask-"), "state");
    const p = Bun.spawn(["sh", "-c", `umask 000; exec "$0" mcp --persist --state-dir "$1"`, BINARY, stateDir], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    cleanup.push(async () => {
      p.kill("SIGKILL");
      await p.exited;
    });
    // One background task through raw JSON-RPC: it creates the task folder, meta.json and logs.
    const lines = (async function* () {
      const dec = new TextDecoder();
      let buf = "";
      for await (const chunk of p.stdout as ReadableStream<Uint8Array>) {
        buf += dec.decode(chunk);
        for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
          yield buf.slice(0, nl);
          buf = buf.slice(nl + 1);
        }
      }
    })();
    const send = (o: unknown) => {
      p.stdin.write(JSON.stringify(o) + "\n");
      p.stdin.flush();
    };
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
    await lines.next();
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bash", arguments: { command: "echo hi", run_in_background: true } } });
    await lines.next();
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "task_output", arguments: { task_id: "bg-1", wait: true, timeout: 10 } } });
    await lines.next();
    const modes: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        const st = lstatSync(path);
        modes.push(`${path.slice(stateDir.length)} ${(st.mode & 0o777).toString(8)}`);
        if (st.isDirectory()) walk(path);
      }
    };
    modes.push(`/ ${(lstatSync(stateDir).mode & 0o777).toString(8)}`);
    walk(stateDir);
    expect(modes.some((m) => m.startsWith("/tasks/bg-1/meta.json "))).toBe(true);
    expect(modes.some((m) => m.startsWith("/tasks/bg-1/stdout.log "))).toBe(true);
    const wrong = modes.filter((m) => {
      const [path, mode] = m.split(" ");
      // A record's temporary file may have been renamed since the walk (the task's end being recorded).
      const st = lstatSync(join(stateDir, path!), { throwIfNoEntry: false });
      if (!st) return false;
      // By design: the mode-000 file bound over hidden secret files, and the sandbox's own
      // device nodes (0666, owned by nobody) in their 0700 folder (sandbox/namespaces/devices.ts), and the
      // spawn helper, which must be executable (read-only to its owner, in a 0700 folder).
      if (path === "/sandbox-empty" && mode === "0") return false;
      if (/^\/bin\/agent-shell-helper-[0-9a-f]+$/.test(path!) && mode === "500") return false;
      if (path!.startsWith("/sandbox-dev/") && st.isCharacterDevice() && mode === "666") return false;
      return mode !== (st.isDirectory() ? "700" : "600");
    });
    expect(wrong).toEqual([]);
  });
});

describe("links planted in the state dir", () => {
  test("change no file outside it and send no log outside it", async () => {
    const outside = scratch("as-victims-");
    const stateDir = scratch("as-state-planted-");
    const victims = ["owner", "last", "tmp", "log", "lock"].map((n) => {
      const path = join(outside, n);
      writeFileSync(path, `victim ${n}\n`);
      return path;
    });
    const [owner, last, tmp, log, lock] = victims as [string, string, string, string, string];
    symlinkSync(owner, join(stateDir, "owner.json"));
    symlinkSync(last, join(stateDir, "last-id"));
    symlinkSync(lock, join(stateDir, "owner.lock"));
    mkdirSync(join(stateDir, "tasks", "bg-1"), { recursive: true });
    symlinkSync(tmp, join(stateDir, "tasks", "bg-1", "meta.json.tmp"));
    symlinkSync(log, join(stateDir, "tasks", "bg-1", "stdout.log"));
    const elsewhere = join(outside, "dir");
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(stateDir, "tasks", "bg-2"));

    // owner.lock planted as a link: the persistent registry refuses to lock through it.
    const refused = await refusedStart(stateDir, ["--persist"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${join(stateDir, "owner.lock")} is a symbolic link`);
    rmSync(join(stateDir, "owner.lock"));

    const s = await session(stateDir, ["--persist"]);
    for (const command of ["echo one", "echo two"]) {
      const started = await s.call("bash", { command, run_in_background: true });
      await s.call("task_output", { task_id: started.task_id, wait: true, timeout: 10 });
    }
    for (const v of victims) expect(readFileSync(v, "utf8")).toBe(`victim ${v.slice(outside.length + 1)}\n`);
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});

describe("a forged meta.json", () => {
  /** A process the test owns, in its own group, with its real start time. */
  function victimProcess() {
    const p = Bun.spawn(["sleep", "300"], { detached: true, stdio: ["ignore", "ignore", "ignore"] });
    cleanup.push(async () => {
      process.kill(-p.pid, "SIGKILL");
      await waitForExit(p.pid, 5000);
    });
    const stat = readFileSync(`/proc/${p.pid}/stat`, "latin1");
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
    return { pid: p.pid, start };
  }

  function forgedMeta(pid: number, start: string) {
    return JSON.stringify({
      task_id: "bg-7",
      kind: "bash",
      command: "sleep 300",
      cwd: "/",
      tty: false,
      pid,
      pgid: pid,
      pgid_start: start,
      owner_token: "4242-forged",
      boot_id: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
      started_at: new Date().toISOString(),
      status: "running",
    });
  }

  test("in a dead owner's folder: the start-up sweep signals nothing", async () => {
    const victim = victimProcess();
    const stateDir = scratch("as-state-forged-");
    const dead = join(stateDir, "owners", "4242-forged");
    mkdirSync(join(dead, "tasks", "bg-7"), { recursive: true, mode: 0o700 });
    writeFileSync(join(dead, "tasks", "bg-7", "meta.json"), forgedMeta(victim.pid, victim.start));
    await session(stateDir);
    // The sweep ran during start-up, before the server answered initialize.
    expect(readdirSync(join(stateDir, "owners"))).not.toContain("4242-forged");
    expect(alive(victim.pid)).toBe(true);
  });

  test("in a persistent folder: recovery does not adopt it, so kill_shell cannot signal it", async () => {
    const victim = victimProcess();
    const stateDir = scratch("as-state-forged-p-");
    mkdirSync(join(stateDir, "tasks", "bg-7"), { recursive: true, mode: 0o700 });
    writeFileSync(join(stateDir, "tasks", "bg-7", "meta.json"), forgedMeta(victim.pid, victim.start));
    const s = await session(stateDir, ["--persist"]);
    const out = await s.call("task_output", { task_id: "bg-7" });
    expect(out.status).toBe("lost");
    await s.call("kill_shell", { task_id: "bg-7" });
    expect(alive(victim.pid)).toBe(true);
  });
});

describe("the spawn helper is never run from a path a command could have replaced (SPEC §26)", () => {
  test("a copy replaced on disk is run neither by the server that checked it nor by the next one, which puts it back", async () => {
    const stateDir = scratch("as-state-helper-");
    const marker = join(scratch("as-helper-victim-"), "planted-helper-ran");
    const s = await startServer({ stateDir });
    let path = "";
    try {
      expect((await s.call("bash", { command: "echo one", tty: true })).stdout).toContain("one");
      const [copy] = readdirSync(join(stateDir, "bin")).filter((n) => n.startsWith("agent-shell-helper-") && !n.endsWith(".tmp"));
      path = join(stateDir, "bin", copy!);
      // Replaced as a command would replace it (a running program's file cannot be written in place).
      writeFileSync(`${path}.planted`, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
      renameSync(`${path}.planted`, path);
      expect((await s.call("bash", { command: "echo two", tty: true })).stdout).toContain("two");
      expect(() => lstatSync(marker)).toThrow();
    } finally {
      await s.close();
    }
    const next = await startServer({ stateDir });
    try {
      expect((await next.call("bash", { command: "echo three", tty: true })).stdout).toContain("three");
      expect(() => lstatSync(marker)).toThrow();
      expect(readFileSync(path).subarray(0, 4).toString("latin1")).toBe("\x7fELF");
    } finally {
      await next.close();
    }
  });
});
