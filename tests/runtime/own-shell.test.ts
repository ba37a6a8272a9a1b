/**
 * SPEC §23: the user's own shell (a snapshot of their login shell that every local command
 * starts from), sessions (a line of work's directory and exports carry over), and the
 * client's clock (a call about to outlive the client's timeout is handed over as a
 * background task). Against the compiled binary over the MCP SDK client; every server gets a
 * home, rc files and SHELL of its own.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/cli.ts";
import { BINARY, type McpSession, startServer } from "../helpers/mcp.ts";
import { uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A home of the test's own with these rc files, and a tool in ~/tools that only the rc files put on PATH. */
function home(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync("/var/tmp/as-own-shell-"));
  made.push(dir);
  mkdirSync(join(dir, "tools"));
  writeFileSync(join(dir, "tools", "mytool"), "#!/bin/sh\necho mytool-ran\n");
  chmodSync(join(dir, "tools", "mytool"), 0o755);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** What a desktop harness gives its servers: a bare PATH, and the user's HOME and SHELL. */
function desktopEnv(dir: string, shell = "/bin/bash"): Record<string, string> {
  return { HOME: dir, SHELL: shell, PATH: "/usr/bin:/bin", XDG_CONFIG_HOME: join(dir, ".config"), AGENT_SHELL_SHELL_SNAPSHOT: "true" };
}

const RC = [
  'export PATH="$HOME/tools:$PATH"',
  "export FROM_RC=rc-value",
  "export RC_API_TOKEN=rc-secret-value",
  "alias hi='echo hi-from-alias'",
  'greet() { echo "greet:$1"; }',
  "",
].join("\n");

const USES_ALL_FOUR = 'mytool; echo "$FROM_RC"; hi; greet x; echo "token:${RC_API_TOKEN-unset}"';

async function withServer<T>(env: Record<string, string>, body: (s: McpSession) => Promise<T>, args: string[] = []): Promise<T> {
  const s = await startServer({ env, args });
  try {
    return await body(s);
  } finally {
    await s.close();
  }
}

describe("the shell snapshot", () => {
  test("a bare PATH and a .bashrc: a command uses the rc file's PATH, export, alias and function; secrets stay out; the call's env wins", async () => {
    const dir = home({ ".bashrc": RC });
    await withServer(desktopEnv(dir), async (s) => {
      const r = await s.call("bash", { command: USES_ALL_FOUR });
      expect(r.stdout).toBe("mytool-ran\nrc-value\nhi-from-alias\ngreet:x\ntoken:unset\n");
      expect(r.exit_code).toBe(0);
      expect(r.notes).toBeUndefined();
      const wins = await s.call("bash", { command: 'echo "$FROM_RC"', env: { FROM_RC: "from-call" } });
      expect(wins.stdout).toBe("from-call\n");
      // The server's own non-interactive defaults still hold over the user's.
      expect((await s.call("bash", { command: 'echo "$PAGER"' })).stdout).toBe("cat\n");
      // Scripts a command runs get the user's environment, not the aliases (nor agent-shell's prelude).
      const nested = await s.call("bash", { command: `bash -c 'echo "\${BASH_ENV-none}"; type -t hi || echo no-alias'` });
      expect(nested.stdout).toBe("none\nno-alias\n");
    });
  });

  test("a .bash_profile counts for a login shell, and a terminal command sees it too", async () => {
    const dir = home({ ".bash_profile": RC });
    await withServer(desktopEnv(dir), async (s) => {
      const r = await s.call("bash", { command: USES_ALL_FOUR, tty: true });
      expect(r.stdout.replaceAll("\r", "")).toContain("mytool-ran\nrc-value\nhi-from-alias\ngreet:x\ntoken:unset");
    });
  });

  test("a later server starts from the snapshot an earlier one kept, while the shell runs again: off the first call's path", async () => {
    const nap = uniqueSleep(4);
    const dir = home({ ".bashrc": `sleep ${nap}\n${RC}` });
    const snapshotFolders = () => readdirSync(tmpdir()).filter((f) => f.startsWith("agent-shell-snapshot-"));
    const before = snapshotFolders();
    const first = await withServer(desktopEnv(dir), async (s) => {
      const t0 = performance.now();
      const r = await s.call("bash", { command: 'echo "$FROM_RC"' });
      return { ms: performance.now() - t0, out: r.stdout };
    });
    expect(first.out).toBe("rc-value\n");
    expect(first.ms).toBeGreaterThan(2000); // the first server ever waits for the shell (started at initialize)
    const kept = readdirSync(join(dir, ".config", "agent-shell", "shell")).filter((f) => f.startsWith("snapshot-"));
    expect(kept.length).toBe(1);
    const text = readFileSync(join(dir, ".config", "agent-shell", "shell", kept[0]!), "utf8");
    expect(text).toContain("FROM_RC");
    expect(text).not.toContain("rc-secret-value");
    // Only what the rc file set: what the shell inherited comes from the next server's own environment.
    expect(text).not.toContain('"SHELL"');
    await withServer(desktopEnv(dir), async (s) => {
      const t0 = performance.now();
      const r = await s.call("bash", { command: USES_ALL_FOUR });
      expect(performance.now() - t0).toBeLessThan(1500);
      expect(r.stdout).toBe("mytool-ran\nrc-value\nhi-from-alias\ngreet:x\ntoken:unset\n");
    });
    // That server closed while its shell was still starting: the shell and its folder went with it.
    expect(await waitNoProcess(`sleep ${nap}`)).toEqual([]);
    expect(snapshotFolders().filter((f) => !before.includes(f))).toEqual([]);
  }, 30_000);

  test("`shell check` lists the names it holds and how long it took, never a value; a secret-named one is only named as left out", async () => {
    const dir = home({ ".bashrc": RC });
    const r = await runCli(["shell", "check", "--json"], { env: desktopEnv(dir), cwd: dir });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.ok).toBe(true);
    expect(report.shell).toBe("/bin/bash");
    expect(report.took_ms).toBeGreaterThan(0);
    expect(report.variables).toContain("FROM_RC");
    expect(report.variables).toContain("PATH");
    expect(report.variables).not.toContain("RC_API_TOKEN");
    expect(report.secret_named_left_out).toEqual(["RC_API_TOKEN"]);
    expect(report.aliases).toEqual(["hi"]);
    expect(report.functions).toEqual(["greet"]);
    const text = await runCli(["shell", "check"], { env: desktopEnv(dir), cwd: dir });
    expect(text.stdout).toMatch(/captured in \d+ ms/);
    for (const out of [r.stdout, text.stdout]) {
      expect(out).not.toContain("rc-secret-value");
      expect(out).not.toContain("rc-value");
    }
  });

  test("an rc file that sleeps leaves the server answering: the first command runs from the server's environment after the limit, with a note, once", async () => {
    const nap = uniqueSleep(60);
    const dir = home({ ".bashrc": `${RC}sleep ${nap}\n` });
    await withServer(desktopEnv(dir), async (s) => {
      const t0 = performance.now();
      expect((await s.call("task_list", {})).tasks).toEqual([]);
      expect(performance.now() - t0).toBeLessThan(2000);
      const r = await s.call("bash", { command: 'echo "${FROM_RC-none}"; command -v mytool || echo no-tool' });
      expect(r.exit_code).toBe(0);
      expect(r.stdout).toBe("none\nno-tool\n");
      expect(r.notes.join(" ")).toContain("did not finish starting within 10 s");
      expect(performance.now() - t0).toBeLessThan(15_000);
      expect((await s.call("bash", { command: "true" })).notes).toBeUndefined();
      // The shell and what its rc file started are gone.
      expect(await waitNoProcess(`sleep ${nap}`)).toEqual([]);
    });
  }, 30_000);

  test("an rc file that waits for input reads end-of-file at once (stdin is closed): the snapshot holds what follows", async () => {
    const dir = home({ ".bashrc": `read -r answer\n${RC}` });
    const t0 = performance.now();
    const r = await runCli(["shell", "check", "--json"], { env: desktopEnv(dir), cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).variables).toContain("FROM_RC");
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  test("an rc file that fails is a note in the first result and in `config show`; commands still run", async () => {
    const dir = home({ ".bashrc": 'export FROM_RC=half\necho "rc says no" >&2\nexit 1\n' });
    await withServer(desktopEnv(dir), async (s) => {
      const r = await s.call("bash", { command: 'echo "${FROM_RC-none}"' });
      expect(r.stdout).toBe("none\n");
      expect(r.notes.join(" ")).toContain("exited with 1");
      expect(r.notes.join(" ")).toContain("rc says no");
    });
    const shown = await runCli(["config", "show", "--json"], { env: desktopEnv(dir), cwd: dir });
    expect(shown.code).toBe(0);
    const config = JSON.parse(shown.stdout);
    expect(config.shell_snapshot).toEqual({ value: true, source: "env:AGENT_SHELL_SHELL_SNAPSHOT" });
    expect(config.shell.value).toContain("not captured");
    expect((await runCli(["shell", "check"], { env: desktopEnv(dir), cwd: dir })).code).toBe(1);
  });

  test("shell_snapshot = false: commands start from the server's environment, as before", async () => {
    const dir = home({ ".bashrc": RC });
    await withServer({ ...desktopEnv(dir), AGENT_SHELL_SHELL_SNAPSHOT: "false" }, async (s) => {
      const r = await s.call("bash", { command: 'command -v mytool || echo no-tool; echo "${FROM_RC-none}"; type -t hi greet || echo none-defined' });
      expect(r.stdout).toBe("no-tool\nnone\nnone-defined\n");
    });
  });

  test.skipIf(!Bun.which("zsh"))("zsh: its .zshrc's PATH, export, alias and function reach a command", async () => {
    const dir = home({ ".zshrc": RC });
    await withServer(desktopEnv(dir, Bun.which("zsh")!), async (s) => {
      const r = await s.call("bash", { command: USES_ALL_FOUR });
      expect(r.stdout).toBe("mytool-ran\nrc-value\nhi-from-alias\ngreet:x\ntoken:unset\n");
    });
  });
});

describe("sessions", () => {
  test("directory and exports carry over within a session, not to another or to calls without one; working_directory and env win", async () => {
    const dir = home({});
    await withServer({ ...desktopEnv(dir), AGENT_SHELL_SHELL_SNAPSHOT: "false" }, async (s) => {
      mkdirSync(join(s.cwd, "sub"));
      const sub = join(s.cwd, "sub");
      await s.call("bash", { command: "cd sub && export X=1 && export GONE=1", session: "a" });
      expect((await s.call("bash", { command: 'pwd; echo "${X-none}"', session: "a" })).stdout).toBe(`${sub}\n1\n`);
      expect((await s.call("bash", { command: 'pwd; echo "${X-none}"', session: "b" })).stdout).toBe(`${s.cwd}\nnone\n`);
      expect((await s.call("bash", { command: 'pwd; echo "${X-none}"' })).stdout).toBe(`${s.cwd}\nnone\n`);
      expect((await s.call("bash", { command: 'echo "$X"', session: "a", env: { X: "2" } })).stdout).toBe("2\n");
      await s.call("bash", { command: "unset GONE", session: "a" });
      expect((await s.call("bash", { command: 'echo "${GONE-unset} $X"', session: "a" })).stdout).toBe("unset 1\n");
      expect((await s.call("bash", { command: "pwd", session: "a", working_directory: s.cwd })).stdout).toBe(`${s.cwd}\n`);
      // That call ended in the server's directory: the session is there now.
      expect((await s.call("bash", { command: "pwd", session: "a" })).stdout).toBe(`${s.cwd}\n`);
      const listed = await s.call("task_list", {});
      expect(listed.sessions).toEqual([
        { name: "a", cwd: s.cwd },
        { name: "b", cwd: s.cwd },
      ]);
    });
  });

  test("a failing command keeps the directory it reached; `cd /etc` does not make a later call run outside the allowed paths", async () => {
    const dir = home({});
    await withServer({ ...desktopEnv(dir), AGENT_SHELL_SHELL_SNAPSHOT: "false" }, async (s) => {
      mkdirSync(join(s.cwd, "sub"));
      const failed = await s.call("bash", { command: "cd sub && false", session: "c" });
      expect(failed.exit_code).toBe(1);
      expect((await s.call("bash", { command: "pwd", session: "c" })).stdout).toBe(`${join(s.cwd, "sub")}\n`);
      await s.call("bash", { command: "cd /etc", session: "d" });
      const refused = await s.call("bash", { command: "pwd", session: "d" });
      expect(refused.error_code).toBe("ACCESS_DENIED");
      expect(refused.error).toContain("session 'd' is in /etc");
      expect(refused.error).toContain("working_directory");
      expect((await s.call("bash", { command: "pwd", session: "d", working_directory: "." })).stdout).toBe(`${s.cwd}\n`);
      expect((await s.call("bash", { command: "pwd", session: "d" })).stdout).toBe(`${s.cwd}\n`);
      expect((await s.call("task_list", {})).sessions).toContainEqual({ name: "c", cwd: join(s.cwd, "sub") });
    });
  });

  test("at the Landlock level and in read-only mode too: the user's aliases, and the session's state", async () => {
    const dir = home({ ".bashrc": RC });
    await withServer({ ...desktopEnv(dir), AGENT_SHELL_SANDBOX_LEVEL: "landlock" }, async (s) => {
      mkdirSync(join(s.cwd, "sub"));
      const first = await s.call("bash", { command: "hi; cd sub; export Z=ll", session: "l", sandbox: "read-only" });
      expect(first.sandbox_level).toBe("landlock");
      expect(first.stdout).toBe("hi-from-alias\n");
      expect((await s.call("bash", { command: 'greet "$Z"; pwd', session: "l" })).stdout).toBe(`greet:ll\n${join(s.cwd, "sub")}\n`);
    });
  });

  test("a session with the user's shell: its aliases and the session's state together", async () => {
    const dir = home({ ".bashrc": RC });
    await withServer(desktopEnv(dir), async (s) => {
      mkdirSync(join(s.cwd, "sub"));
      await s.call("bash", { command: "cd sub; export Y=kept", session: "w" });
      expect((await s.call("bash", { command: 'hi; echo "$Y"; pwd', session: "w" })).stdout).toBe(`hi-from-alias\nkept\n${join(s.cwd, "sub")}\n`);
    });
  });
});

describe("the client's clock", () => {
  async function handedOver(s: McpSession, marker: string) {
    const t0 = performance.now();
    const r = await s.call("bash", { command: `echo started; sleep ${marker}; echo finished` });
    const ms = performance.now() - t0;
    expect(ms).toBeLessThan(6000);
    expect(r.backgrounded).toBe(true);
    expect(r.status).toBe("running");
    expect(r.stdout).toBe("started\n");
    expect(r.notes.join(" ")).toContain("keeps running");
    return r.task_id as string;
  }

  test("client_timeout_seconds = 6: a 12 s command returns backgrounded in under 6 s, keeps running, and task_output wait gets its end", async () => {
    const dir = home({});
    const config = join(dir, "config.toml");
    writeFileSync(config, "client_timeout_seconds = 6\nshell_snapshot = false\n");
    await withServer(
      { ...desktopEnv(dir), AGENT_SHELL_SHELL_SNAPSHOT: "false" },
      async (s) => {
        const id = await handedOver(s, "12");
        // Each wait ends before the client would give up on it, until the command's own end.
        let out: any;
        for (let i = 0; i < 6; i++) {
          out = await s.call("task_output", { task_id: id, wait: true, timeout_seconds: 60 });
          if (out.status !== "running") break;
        }
        expect(out.status).toBe("completed");
        expect(out.exit_code).toBe(0);
        expect(out.stdout).toContain("finished");
        // A call's own shorter time limit still times out.
        const short = await s.call("bash", { command: "sleep 5", timeout_seconds: 2 });
        expect(short.error_code).toBe("TIMEOUT");
      },
      ["--config", config],
    );
  }, 40_000);

  test("AGENT_SHELL_CLIENT_TIMEOUT_SECONDS does the same", async () => {
    const dir = home({});
    const nap = uniqueSleep(12);
    await withServer({ ...desktopEnv(dir), AGENT_SHELL_SHELL_SNAPSHOT: "false", AGENT_SHELL_CLIENT_TIMEOUT_SECONDS: "6" }, async (s) => {
      // Progress keeps flowing to a client that asked for it, until the hand-over.
      const progress: number[] = [];
      const t0 = performance.now();
      const raw: any = await s.client.callTool({ name: "bash", arguments: { command: `echo started; sleep ${nap}` } }, undefined, {
        onprogress: (p) => void progress.push(p.progress),
        timeout: 60_000,
      });
      expect(performance.now() - t0).toBeLessThan(6000);
      expect(raw.structuredContent.backgrounded).toBe(true);
      expect(progress.length).toBeGreaterThan(0);
      const id = raw.structuredContent.task_id;
      const listed = await s.call("task_list", {});
      expect(listed.tasks.find((t: any) => t.task_id === id).status).toBe("running");
      await s.call("kill_shell", { task_id: id });
      expect(await waitNoProcess(`sleep ${nap}`)).toEqual([]);
    });
  }, 30_000);

  test("`mcp --shared`: the connection's own client_timeout_seconds reaches the daemon", async () => {
    const dir = home({});
    const state = join(dir, "state");
    mkdirSync(state, { mode: 0o700 });
    const nap = uniqueSleep(12);
    const env = { ...desktopEnv(dir), AGENT_SHELL_SHELL_SNAPSHOT: "false" };
    // The daemon is started by the first connection, which has no client limit; the second one has.
    const plain = await startServer({ cwd: dir, stateDir: state, env, args: ["--shared", "--cwd", dir] });
    const limited = await startServer({ cwd: dir, stateDir: state, env: { ...env, AGENT_SHELL_CLIENT_TIMEOUT_SECONDS: "6" }, args: ["--shared", "--cwd", dir] });
    try {
      const id = await handedOver(limited, nap);
      expect((await plain.call("bash", { command: "sleep 0.1; echo plain" })).stdout).toBe("plain\n");
      await plain.call("kill_shell", { task_id: id });
      expect(await waitNoProcess(`sleep ${nap}`)).toEqual([]);
    } finally {
      await limited.close();
      await plain.close();
      Bun.spawnSync([BINARY, "daemon", "stop"], { env: { ...process.env, AGENT_SHELL_STATE_DIR: state }, stdout: "ignore", stderr: "ignore" });
    }
  }, 30_000);
});
