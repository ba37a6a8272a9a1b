import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type McpSession, startServer } from "../helpers/mcp.ts";
import { processes, processesMatching, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";
import { freePort, type Sshd, startSshd } from "../helpers/sshd.ts";

/**
 * SSH hosts (SPEC §7) against a real OpenSSH sshd on 127.0.0.1 started by the test with a
 * temporary host key and authorized key. The "remote" host is this machine, so remote
 * processes are checked with ps here.
 */

// Real sshd, real connections, on 2 cores shared with other jobs: more than bun's 5 s default.
setDefaultTimeout(30_000);

let sshd: Sshd;
let server: McpSession;
let configFile: string;

/** Processes running exactly `sleep <marker>` (not the shells whose command line mentions it). */
function sleeping(marker: string) {
  return processesMatching(`sleep ${marker}`).filter((p) => p.cmdline === `sleep ${marker}`);
}

function remoteTaskDirs(): string[] {
  const dir = join(sshd.home, ".agent-shell", "tasks");
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function serverWith(toml: string): Promise<McpSession> {
  const file = join(sshd.dir, `config-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(file, toml);
  return startServer({ args: ["--config", file] });
}

beforeAll(async () => {
  sshd = await startSshd();
  configFile = join(sshd.dir, "config.toml");
  writeFileSync(configFile, sshd.hostToml("box") + sshd.hostToml("jail", { allowed_paths: JSON.stringify(["/tmp"]) }).replace(/"\[(.*)\]"/, "[$1]").replace(/\\"/g, '"'));
  server = await startServer({ args: ["--config", configFile] });
});

afterAll(async () => {
  await server?.close();
  await sshd?.stop();
});

describe("foreground on a remote host", () => {
  test("stdout, stderr and exit code come back separately", async () => {
    const r = await server.call("bash", { command: "echo hi; echo err >&2; exit 3", host: "box" });
    expect(r.stdout).toBe("hi\n");
    expect(r.stderr).toBe("err\n");
    expect(r.exit_code).toBe(3);
    expect(r.success).toBe(false);
  });

  test("timeout terminates the remote process group", async () => {
    const marker = uniqueSleep(30);
    const r = await server.call("bash", { command: `sleep ${marker}; echo never`, host: "box", timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(r.error).toBe("Command timed out after 1 seconds");
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
  }, 30_000);

  test("a remote group that ignores SIGTERM is killed after the grace period", async () => {
    const marker = uniqueSleep(30);
    const t0 = performance.now();
    const r = await server.call("bash", { command: `trap '' TERM; sleep ${marker}`, host: "box", timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
    // TERM is ignored, so the end comes from KILL after the grace period (2 s by default).
    expect(performance.now() - t0).toBeGreaterThan(2500);
  }, 30_000);

  test("SIGKILL of agent-shell: its remote foreground commands are terminated too", async () => {
    const marker = uniqueSleep(30);
    const s = await startServer({ args: ["--config", configFile] });
    void s.call("bash", { command: `sleep ${marker}`, host: "box" }).catch(() => {});
    const deadline = Date.now() + 10_000;
    while (sleeping(marker).length === 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(sleeping(marker).length).toBe(1);
    process.kill(s.pid, "SIGKILL");
    await s.close();
    // The connection closes with the process; the remote control shell reaps what it tracked.
    expect(await waitNoProcess(`sleep ${marker}`, 8000)).toEqual([]);
  }, 30_000);

  test("a command with quotes, $, newlines and backslashes runs byte-for-byte as written", async () => {
    const command = [
      `printf '%s|' "it's" 'say "hi"' '$HOME' "\\$PATH" 'back\\slash' "a\\\\b"`,
      `echo 'two`,
      `lines' "tab\there" $((6*7)) \\`,
      `  continued`,
      `cat <<'EOF'`,
      `$not_expanded \`nor this\` \\n`,
      `EOF`,
    ].join("\n");
    const local = await server.call("bash", { command });
    const remote = await server.call("bash", { command, host: "box" });
    expect(remote.stderr).toBe("");
    expect(remote.exit_code).toBe(0);
    expect(remote.stdout).toBe(local.stdout);
    expect(remote.stdout).toContain(`it's|say "hi"|$HOME|$PATH|back\\slash|a\\b|two\nlines tab\there 42 continued\n$not_expanded \`nor this\` \\n\n`);
  });

  test("working_directory defaults to the remote home; a missing one is NOT_FOUND", async () => {
    const home = await server.call("bash", { command: "pwd", host: "box" });
    expect(home.stdout).toBe(`${sshd.home}\n`);
    const tmp = await server.call("bash", { command: "pwd", host: "box", working_directory: "/tmp" });
    expect(tmp.stdout).toBe("/tmp\n");
    const missing = await server.call("bash", { command: "pwd", host: "box", working_directory: "/no/such/dir" });
    expect(missing.error_code).toBe("NOT_FOUND");
    expect(missing.error).toContain("/no/such/dir");
  });

  test("a host's allowed_paths limit its working directories; local allowed paths do not apply", async () => {
    const inside = await server.call("bash", { command: "pwd", host: "jail", working_directory: "/tmp" });
    expect(inside.stdout).toBe("/tmp\n");
    const outside = await server.call("bash", { command: "pwd", host: "jail", working_directory: "/etc" });
    expect(outside.error_code).toBe("ACCESS_DENIED");
    expect(outside.error).toContain("outside allowed paths");
    const escape = await server.call("bash", { command: "pwd", host: "jail", working_directory: "/tmp/../etc" });
    expect(escape.error_code).toBe("ACCESS_DENIED");
  });

  test("env reaches the remote command; the local environment does not", async () => {
    const r = await server.call("bash", {
      command: `echo "$GREETING|$PAGER|\${AGENT_SHELL_LOCAL_ONLY:-unset}"`,
      host: "box",
      env: { GREETING: "it's $fine" },
    });
    expect(r.stdout).toBe("it's $fine|cat|unset\n");
  });

  test("stdin text reaches remote commands byte-for-byte, foreground and background", async () => {
    const text = "line 1\nit's $HOME \\ \"q\" 100% \u0000 nul é\t\nno newline at end";
    const fg = await server.call("bash", { command: "cat", host: "box", stdin: text });
    expect(fg.stdout).toBe(text);
    const bg = await server.call("bash", { command: "cat", host: "box", stdin: text, run_in_background: true });
    const out = await server.call("task_output", { task_id: bg.task_id, wait: true, timeout: 20 });
    expect(out.stdout).toBe(text);
    // Without stdin, a remote command reads end-of-file at once (like /dev/null).
    const none = await server.call("bash", { command: "cat; echo eof", host: "box", timeout_seconds: 10 });
    expect(none.stdout).toBe("eof\n");
    // A NUL cannot reach a remote shell inside the command: refused, naming the field.
    const nul = await server.call("bash", { command: "echo a\u0000b", host: "box" });
    expect(nul.error_code).toBe("INVALID_ARGUMENT");
    expect(nul.error).toContain("command");
  }, 30_000);

  test("a remote rc file that prints text does not leak into the output", async () => {
    const rc = join(sshd.home, ".bashrc");
    const lean = readFileSync(rc, "utf8");
    writeFileSync(rc, `${lean}echo "welcome to the box"\necho P-not-a-pgid\n`);
    try {
      const r = await server.call("bash", { command: "echo clean", host: "box" });
      expect(r.stdout).toBe("clean\n");
      expect(r.exit_code).toBe(0);
    } finally {
      writeFileSync(rc, lean);
    }
  });

  test("unknown host name → INVALID_ARGUMENT listing the known hosts", async () => {
    const r = await server.call("bash", { command: "true", host: "nope" });
    expect(r.error_code).toBe("INVALID_ARGUMENT");
    expect(r.error).toContain("'nope'");
    expect(r.error).toContain("box, jail");
  });

  test("20 concurrent commands against MaxSessions 10 all succeed", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => server.call("bash", { command: `sleep 0.3; echo ${i}`, host: "box" })),
    );
    results.forEach((r, i) => {
      expect(r.error).toBeUndefined();
      expect(r.stdout).toBe(`${i}\n`);
      expect(r.exit_code).toBe(0);
    });
  }, 30_000);
});

describe("background on a remote host", () => {
  test("task_output waits for the end; task_list and task_output show the host", async () => {
    const bg = await server.call("bash", {
      command: "echo one; sleep 0.5; echo two; echo warn >&2; exit 5",
      host: "box",
      run_in_background: true,
    });
    expect(bg.status).toBe("running");
    const list = await server.call("task_list", {});
    expect(list.tasks.find((t: any) => t.task_id === bg.task_id).host).toBe("box");
    const out = await server.call("task_output", { task_id: bg.task_id, wait: true, timeout: 30 });
    expect(out.status).toBe("completed");
    expect(out.host).toBe("box");
    expect(out.stdout).toBe("one\ntwo\n");
    expect(out.stderr).toBe("warn\n");
    expect(out.exit_code).toBe(5);
    // Output is spooled locally; the remote files go.
    const deadline = Date.now() + 5000;
    while (remoteTaskDirs().length && Date.now() < deadline) await Bun.sleep(50);
    expect(remoteTaskDirs()).toEqual([]);
  }, 30_000);

  test("kill_shell terminates the remote group, grandchildren too", async () => {
    const a = uniqueSleep();
    const b = uniqueSleep();
    const bg = await server.call("bash", {
      command: `sleep ${a} & bash -c 'sleep ${b}' & echo started; wait`,
      host: "box",
      run_in_background: true,
    });
    const deadline = Date.now() + 10_000;
    while ((sleeping(a).length === 0 || sleeping(b).length === 0) && Date.now() < deadline) await Bun.sleep(20);
    expect(sleeping(a).length).toBe(1);
    expect(sleeping(b).length).toBe(1);
    const k = await server.call("kill_shell", { task_id: bg.task_id });
    expect(k.status).toBe("killed");
    expect(processesMatching(`sleep ${a}`)).toEqual([]);
    expect(processesMatching(`sleep ${b}`)).toEqual([]);
    const out = await server.call("task_output", { task_id: bg.task_id, wait: true, timeout: 10 });
    expect(out.status).toBe("killed");
    expect(out.stdout).toBe("started\n");
  }, 30_000);

  test("ready_port is checked on the remote host", async () => {
    const port = await freePort();
    const bg = await server.call("bash", {
      command: `exec python3 -m http.server ${port} --bind 127.0.0.1`,
      host: "box",
      run_in_background: true,
      ready_port: port,
      ready_timeout_seconds: 20,
    });
    expect(bg.error).toBeUndefined();
    expect(bg.ready).toBe(true);
    const fetched = await server.call("bash", { command: `curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/`, host: "box" });
    expect(fetched.stdout).toBe("200");
    const k = await server.call("kill_shell", { task_id: bg.task_id });
    expect(k.status).toBe("killed");
  }, 30_000);

  test("more background tasks than session slots: all collected, foreground commands still get through", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const bg = await server.call("bash", { command: `echo s${i}; sleep 3; echo e${i}`, host: "box", run_in_background: true });
      expect(bg.status).toBe("running");
      ids.push(bg.task_id);
    }
    const fg = await server.call("bash", { command: "echo fg", host: "box", timeout_seconds: 30 });
    expect(fg.stdout).toBe("fg\n");
    const all = await server.call("task_output", { task_ids: ids, wait: true, until: "all", timeout: 45 });
    expect(all.finished.length).toBe(12);
    all.results.forEach((r: any, i: number) => {
      expect(r.status).toBe("completed");
      expect(r.stdout).toBe(`s${i}\ne${i}\n`);
      expect(r.exit_code).toBe(0);
    });
  }, 60_000);

  test("a dropped connection loses nothing: every line exactly once, then the exit code", async () => {
    const bg = await server.call("bash", {
      command: "for i in $(seq 1 40); do echo line-$i; sleep 0.1; done; exit 7",
      host: "box",
      run_in_background: true,
    });
    // Wait until output flows over the connection, then cut it.
    let seen = await server.call("task_output", { task_id: bg.task_id });
    const deadline = Date.now() + 10_000;
    while (!seen.stdout.includes("line-5\n") && Date.now() < deadline) {
      await Bun.sleep(50);
      seen = await server.call("task_output", { task_id: bg.task_id });
    }
    expect(await sshd.dropConnections()).toBeGreaterThan(0);
    // While the connection is down the task is still running, with a note saying so.
    let during = await server.call("task_output", { task_id: bg.task_id });
    const noteDeadline = Date.now() + 5000;
    while (!during.note && during.status === "running" && Date.now() < noteDeadline) {
      await Bun.sleep(10);
      during = await server.call("task_output", { task_id: bg.task_id });
    }
    expect(during.status).toBe("running");
    expect(during.note).toContain("reconnecting");
    const out = await server.call("task_output", { task_id: bg.task_id, wait: true, timeout: 40 });
    expect(out.status).toBe("completed");
    expect(out.exit_code).toBe(7);
    const expected = Array.from({ length: 40 }, (_, i) => `line-${i + 1}\n`).join("");
    expect(out.stdout).toBe(expected);
  }, 60_000);

  test("a persistent registry that restarts after a crash re-attaches to its remote tasks", async () => {
    const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-ssh-persist-")));
    try {
      const a = await startServer({ stateDir, args: ["--persist", "--config", configFile] });
      const bg = await a.call("bash", {
        command: "for i in $(seq 1 30); do echo n-$i; sleep 0.1; done; exit 9",
        host: "box",
        run_in_background: true,
      });
      let seen = await a.call("task_output", { task_id: bg.task_id });
      const deadline = Date.now() + 10_000;
      while (!seen.stdout.includes("n-5\n") && Date.now() < deadline) {
        await Bun.sleep(50);
        seen = await a.call("task_output", { task_id: bg.task_id });
      }
      // A crash of the whole tree: the server and its watchdog, without a clean shutdown.
      const watchdogs = processes().filter((p) => p.ppid === a.pid && p.cmdline.includes("agent-shell-watchdog"));
      process.kill(a.pid, "SIGSTOP");
      for (const w of watchdogs) process.kill(w.pid, "SIGKILL");
      process.kill(a.pid, "SIGKILL");
      await a.close();
      const b = await startServer({ stateDir, args: ["--persist", "--config", configFile] });
      try {
        const out = await b.call("task_output", { task_id: bg.task_id, wait: true, timeout: 30 });
        expect(out.status).toBe("completed");
        expect(out.exit_code).toBe(9);
        expect(out.stdout).toBe(Array.from({ length: 30 }, (_, i) => `n-${i + 1}\n`).join(""));
      } finally {
        await b.close();
      }
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 60_000);

  test("remote files gone → the task is lost with a clear reason", async () => {
    const before = remoteTaskDirs();
    const bg = await server.call("bash", { command: "sleep 0.5; echo done", host: "box", run_in_background: true });
    const dirs = remoteTaskDirs().filter((d) => !before.includes(d));
    expect(dirs.length).toBe(1);
    // Remove the task's files behind its back, and make the collector reconnect.
    const rm = Bun.spawnSync(["rm", "-rf", join(sshd.home, ".agent-shell", "tasks", dirs[0]!)]);
    expect(rm.exitCode).toBe(0);
    await sshd.dropConnections();
    const out = await server.call("task_output", { task_id: bg.task_id, wait: true, timeout: 30 });
    expect(out.status).toBe("lost");
    expect(out.lost_reason).toContain("gone");
  }, 30_000);
});

describe("tty on a remote host", () => {
  test("python3 -i through write_stdin answers 42", async () => {
    const bg = await server.call("bash", { command: "python3 -i", host: "box", tty: true, run_in_background: true });
    expect(bg.status).toBe("running");
    let r = await server.call("write_stdin", { task_id: bg.task_id, chars: "", yield_ms: 2000 });
    r = await server.call("write_stdin", { task_id: bg.task_id, chars: "6*7\n", yield_ms: 2000 });
    expect(r.output).toContain("42");
    await server.call("kill_shell", { task_id: bg.task_id });
  }, 30_000);
});

describe("connection failures name the cause", () => {
  test("host key not in known_hosts with strict checking → IO_ERROR with the fingerprint", async () => {
    const empty = join(sshd.dir, "empty_known_hosts");
    writeFileSync(empty, "");
    const s = await serverWith(sshd.hostToml("box", { known_hosts: empty }));
    try {
      const r = await s.call("bash", { command: "true", host: "box" });
      expect(r.error_code).toBe("IO_ERROR");
      const fp = Bun.spawnSync(["ssh-keygen", "-lf", join(sshd.dir, "host_ed25519.pub")]).stdout.toString().split(" ")[1]!;
      expect(fp).toStartWith("SHA256:");
      expect(r.error).toContain(fp);
      expect(r.error).toContain(empty);
      expect(r.error).toContain("unknown");
    } finally {
      await s.close();
    }
  });

  test("accept-new records an unknown host key, as OpenSSH does", async () => {
    const file = join(sshd.dir, "new_known_hosts");
    const s = await serverWith(sshd.hostToml("box", { known_hosts: file, strict_host_key_checking: "accept-new" }));
    try {
      const r = await s.call("bash", { command: "echo ok", host: "box" });
      expect(r.stdout).toBe("ok\n");
      expect(readFileSync(file, "utf8")).toBe(`[127.0.0.1]:${sshd.port} ${sshd.hostKey}\n`);
    } finally {
      await s.close();
    }
  });

  test("hashed known_hosts entries (ssh-keygen -H) are recognised", async () => {
    const file = join(sshd.dir, "hashed_known_hosts");
    writeFileSync(file, readFileSync(sshd.knownHosts));
    const hash = Bun.spawnSync(["ssh-keygen", "-H", "-f", file], { stdout: "ignore", stderr: "ignore" });
    expect(hash.exitCode).toBe(0);
    rmSync(`${file}.old`, { force: true });
    expect(readFileSync(file, "utf8")).toStartWith("|1|");
    const s = await serverWith(sshd.hostToml("box", { known_hosts: file }));
    try {
      const r = await s.call("bash", { command: "echo ok", host: "box" });
      expect(r.stdout).toBe("ok\n");
    } finally {
      await s.close();
    }
  });

  test("a changed host key is refused, naming the known_hosts file", async () => {
    const file = join(sshd.dir, "changed_known_hosts");
    writeFileSync(file, `[127.0.0.1]:${sshd.port} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n`);
    const s = await serverWith(sshd.hostToml("box", { known_hosts: file }));
    try {
      const r = await s.call("bash", { command: "true", host: "box" });
      expect(r.error_code).toBe("IO_ERROR");
      expect(r.error).toContain("CHANGED");
      expect(r.error).toContain(file);
      expect(r.error).toContain("SHA256:");
    } finally {
      await s.close();
    }
  });

  test("wrong key → authentication failure naming the methods tried", async () => {
    const wrong = join(sshd.dir, "wrong_ed25519");
    Bun.spawnSync(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", wrong]);
    const s = await serverWith(sshd.hostToml("box", { identity_file: wrong }));
    try {
      const r = await s.call("bash", { command: "true", host: "box" });
      expect(r.error_code).toBe("IO_ERROR");
      expect(r.error).toContain("authentication failed");
      expect(r.error).toContain(wrong);
      expect(JSON.stringify(r)).not.toContain("PRIVATE KEY");
    } finally {
      await s.close();
    }
  });

  test("a host name that does not resolve → DNS failure", async () => {
    const s = await serverWith(sshd.hostToml("box", { host: "no-such-host.invalid" }));
    try {
      const r = await s.call("bash", { command: "true", host: "box" });
      expect(r.error_code).toBe("IO_ERROR");
      expect(r.error).toContain("DNS lookup failed");
    } finally {
      await s.close();
    }
  });

  test("a server that never answers the handshake → timed out", async () => {
    // Accepts TCP connections and stays silent, like a black-holed SSH port.
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {}, open() {} } });
    const s = await serverWith(sshd.hostToml("box", { port: silent.port }));
    try {
      const r = await s.call("bash", { command: "true", host: "box" });
      expect(r.error_code).toBe("IO_ERROR");
      expect(r.error).toContain("timed out");
    } finally {
      await s.close();
      silent.stop(true);
    }
  }, 40_000);

  test("a port with nothing listening → connection refused", async () => {
    const port = await freePort();
    const s = await serverWith(sshd.hostToml("box", { port }));
    try {
      const r = await s.call("bash", { command: "true", host: "box" });
      expect(r.error_code).toBe("IO_ERROR");
      expect(r.error).toContain("connection refused");
    } finally {
      await s.close();
    }
  });
});

test("nothing is left behind on the remote host", async () => {
  await server.close();
  expect(remoteTaskDirs()).toEqual([]);
  server = await startServer({ args: ["--config", configFile] });
});
