/**
 * SPEC §3.1 `bash` (foreground and the background start result), parity with the original's
 * bash tests, driven through the compiled binary over the MCP SDK client.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { statSync } from "node:fs";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { splitTruncated } from "../helpers/truncation.ts";
import { processesMatching, uniqueSleep, waitForExec, waitNoProcess } from "../helpers/procs.ts";

// Real processes on a shared 2-core machine: bun's 5 s default is too tight under load.
setDefaultTimeout(30_000);

let s: McpSession;
/** For tests that compare host pids printed by the command, or bwrap's 128+N: no sandbox (SPEC §11 `off`). */
let unsandboxed: McpSession;

beforeAll(async () => {
  // The server's own environment sets pagers/prompting: children must still get the SPEC's values.
  s = await startServer({ env: { PAGER: "less", GIT_PAGER: "more", GIT_TERMINAL_PROMPT: "1" } });
  unsandboxed = await startServer({ args: ["--sandbox", "off"] });
});
afterAll(async () => {
  await s.close();
  await unsandboxed.close();
});

describe("bash foreground result", () => {
  test("echo 'hello world' returns stdout 'hello world\\n', exit_code 0, success true", async () => {
    const r = await s.call("bash", { command: "echo 'hello world'" });
    expect(r.command).toBe("echo 'hello world'");
    expect(r.stdout).toBe("hello world\n");
    expect(r.stderr).toBe("");
    expect(r.exit_code).toBe(0);
    expect(r.success).toBe(true);
    expect(typeof r.duration_ms).toBe("number");
    expect(r.duration_ms).toBeGreaterThanOrEqual(0);
    expect(r.error).toBeUndefined();
  });

  test("description is echoed back in the result", async () => {
    const r = await s.call("bash", { command: "true", description: "does nothing" });
    expect(r.description).toBe("does nothing");
  });

  test("no description field when none was given", async () => {
    const r = await s.call("bash", { command: "true" });
    expect("description" in r).toBe(false);
  });

  test("exit 1 gives exit_code 1 and success false, not an error", async () => {
    const raw = await s.callRaw("bash", { command: "exit 1" });
    expect(raw.isError).toBe(false);
    expect(raw.structuredContent.exit_code).toBe(1);
    expect(raw.structuredContent.success).toBe(false);
  });

  test("exit 42 gives exit_code 42", async () => {
    const r = await s.call("bash", { command: "exit 42" });
    expect(r.exit_code).toBe(42);
    expect(r.success).toBe(false);
  });

  test("stderr is captured separately from stdout", async () => {
    const r = await s.call("bash", { command: "echo 'error message' >&2" });
    expect(r.stderr).toBe("error message\n");
    expect(r.stdout).toBe("");
    expect(r.success).toBe(true);
  });

  test("default working directory is the server's cwd", async () => {
    const r = await s.call("bash", { command: "pwd" });
    expect(r.stdout).toBe(`${s.cwd}\n`);
  });

  test("a child killed by a signal has exit_code -1 and signal 'SIGTERM'", async () => {
    // Python signals the shell: `kill` (inside `sh -c` too) is a caution command that asks first.
    const r = await s.call("bash", { command: "python3 -c 'import os, signal; os.kill(os.getppid(), signal.SIGTERM)'; sleep 5" });
    expect(r.exit_code).toBe(-1);
    expect(r.signal).toBe("SIGTERM");
    expect(r.success).toBe(false);
  });

  test("a child killed by SIGKILL reports signal 'SIGKILL'", async () => {
    const r = await s.call("bash", { command: "python3 -c 'import os, signal; os.kill(os.getppid(), signal.SIGKILL)'; sleep 5" });
    expect(r.exit_code).toBe(-1);
    expect(r.signal).toBe("SIGKILL");
  });
});

describe("bash output text", () => {
  test("output without a trailing newline gets none added", async () => {
    const r = await s.call("bash", { command: "printf 'no newline'; printf 'err' >&2" });
    expect(r.stdout).toBe("no newline");
    expect(r.stderr).toBe("err");
  });

  test("blank lines and CRLF are returned byte-for-byte", async () => {
    const r = await s.call("bash", { command: "printf 'a\\r\\n\\n\\nb\\n\\n'" });
    expect(r.stdout).toBe("a\r\n\n\nb\n\n");
  });

  test("invalid UTF-8 bytes are replaced, valid text around them kept", async () => {
    const r = await s.call("bash", { command: "printf 'ok \\xff\\xfe end \\xc3\\xa9'" });
    expect(r.success).toBe(true);
    expect(r.stdout).toBe("ok \uFFFD\uFFFD end é");
  });

  test("multi-byte UTF-8 (emoji) survives intact", async () => {
    const r = await s.call("bash", { command: "printf 'abc🦀def\\n'" });
    expect(r.stdout).toBe("abc🦀def\n");
  });

  test("`echo x > /dev/stdout` and `> /dev/stderr` work in the foreground", async () => {
    const r = await s.call("bash", { command: "echo x > /dev/stdout; echo e > /dev/stderr" });
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toBe("x\n");
    expect(r.stderr).toBe("e\n");
  });

  test("`echo y | tee /dev/stderr` works in the foreground", async () => {
    const r = await s.call("bash", { command: "echo y | tee /dev/stderr" });
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toBe("y\n");
    expect(r.stderr).toBe("y\n");
  });
});

describe("bash output limits (8,000 bytes for stdout and stderr together, SPEC §15)", () => {
  test("stdout over 8,000 bytes keeps its first and last lines, and a long line its head and tail up to the budget around one marker with 'truncated' and the total", async () => {
    // 120,001 bytes: 'HEAD' line, one 119,990-byte line, 'TAIL' line.
    const r = await s.call("bash", {
      command: "printf 'HEAD\\n'; head -c 119990 /dev/zero | tr '\\0' a; printf '\\nTAIL\\n'",
    });
    const total = 5 + 119990 + 6;
    expect(r.stdout_truncated).toBe(true);
    expect(r.stdout.startsWith("HEAD\n")).toBe(true);
    expect(r.stdout.endsWith("\nTAIL\n")).toBe(true);
    const t = splitTruncated(r.stdout);
    expect(t.marker).toContain(String(total));
    const head = t.head.length - 5;
    const tail = t.tail.length - 6;
    expect(head).toBeGreaterThan(3500);
    expect(t.marker).toContain(`bytes ${5 + head}-${5 + 119990 - tail}`);
    expect(t.shownBytes).toBeLessThanOrEqual(8000);
    expect(t.head).toBe(`HEAD\n${"a".repeat(head)}`);
  });

  test("stderr over 8,000 bytes is truncated the same way with stderr_truncated", async () => {
    const r = await s.call("bash", { command: "head -c 80000 /dev/zero | tr '\\0' e >&2" });
    expect(r.stderr_truncated).toBe(true);
    expect(r.stdout_truncated).toBeUndefined();
    const t = splitTruncated(r.stderr);
    expect(t.marker).toContain("80000");
    expect(t.shownBytes).toBeLessThanOrEqual(8000);
    expect(t.head.startsWith("eee")).toBe(true);
    expect(t.tail.endsWith("eee")).toBe(true);
  });

  test("output of exactly 8,000 bytes is not truncated", async () => {
    const r = await s.call("bash", { command: "head -c 8000 /dev/zero | tr '\\0' z" });
    expect(r.stdout.length).toBe(8000);
    expect(r.stdout_truncated).toBeUndefined();
    expect(r.stdout_path).toBeUndefined();
  });

  test("a truncated result names its output task over MCP (not the log paths a model's commands cannot read), whose log holds the full output", async () => {
    const r = await s.call("bash", { command: "head -c 70000 /dev/zero | tr '\\0' q" });
    expect(r.stdout_truncated).toBe(true);
    expect(r).not.toHaveProperty("stdout_path");
    expect(r).not.toHaveProperty("stderr_path");
    const full = await s.call("task_output", { task_id: r.output_task_id });
    expect(statSync(full.stdout_path).size).toBe(70_000);
  });

  test("truncation never splits a multi-byte character", async () => {
    // 30,000 × 'é' = 60,000 bytes; a cut inside a character would show U+FFFD.
    const r = await s.call("bash", { command: "for i in $(seq 1 300); do printf 'éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé'; done" });
    expect(r.stdout_truncated).toBe(true);
    expect(r.stdout).not.toContain("\uFFFD");
  });
});

describe("bash process environment", () => {
  test("stdin is /dev/null: `cat` ends at once and `read` fails", async () => {
    const r = await s.call("bash", { command: "cat; read x; echo \"read=$?\"", timeout_seconds: 20 });
    expect(r.stdout).toBe("read=1\n");
  });

  test("`stdin` text is fed to the command and then closed", async () => {
    const r = await s.call("bash", { command: "cat", stdin: "fed\nlines" });
    expect(r.stdout).toBe("fed\nlines");
  });

  test("the command runs in a session and process group of its own, which it leads, with no controlling terminal", async () => {
    const r = await unsandboxed.call("bash", { command: "cut -d' ' -f1,5,6,7 /proc/$$/stat" });
    const [pid, pgrp, session, ttyNr] = r.stdout.trim().split(" ");
    expect(pgrp).toBe(pid); // its bash leads them: the pid results show is the command's own
    expect(session).toBe(pid);
    expect(ttyNr).toBe("0");
    expect(Number(pgrp)).not.toBe(s.pid);
  });

  test("GIT_TERMINAL_PROMPT=0, PAGER=cat, GIT_PAGER=cat even when the server's env says otherwise", async () => {
    const r = await s.call("bash", { command: 'echo "$GIT_TERMINAL_PROMPT|$PAGER|$GIT_PAGER"' });
    expect(r.stdout).toBe("0|cat|cat\n");
  });

  test("`env` overrides the non-interactive defaults and adds variables", async () => {
    const r = await s.call("bash", {
      command: 'echo "$GIT_TERMINAL_PROMPT|$PAGER|$GIT_PAGER|$MY_VAR"',
      env: { PAGER: "less", MY_VAR: "hello" },
    });
    expect(r.stdout).toBe("0|less|cat|hello\n");
  });

  test("the inherited environment is passed through", async () => {
    const r = await s.call("bash", { command: 'echo "$HOME"' });
    expect(r.stdout).toBe(`${process.env.HOME}\n`);
  });
});

describe("bash timeout", () => {
  test("sleep past timeout_seconds: TIMEOUT error with the partial output, and no process left", async () => {
    const marker = uniqueSleep(2);
    const started = Date.now();
    const raw = await s.callRaw("bash", {
      command: `echo partial; echo perr >&2; sleep ${marker}`,
      timeout_seconds: 1,
      description: "slow",
    });
    const elapsed = Date.now() - started;
    const r = raw.structuredContent;
    expect(raw.isError).toBe(true);
    expect(r.error_code).toBe("TIMEOUT");
    expect(r.error).toBe("Command timed out after 1 seconds");
    expect(r.context.command).toBe(`echo partial; echo perr >&2; sleep ${marker}`);
    expect(r.context.description).toBe("slow");
    expect(r.context.timeout_seconds).toBe(1);
    expect(r.context.stdout).toBe("partial\n");
    expect(r.context.stderr).toBe("perr\n");
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(processesMatching(`sleep ${marker}`)).toEqual([]);
  });

  test("a command that finishes inside its timeout is not a timeout", async () => {
    const r = await s.call("bash", { command: "sleep 0.2; echo done", timeout_seconds: 5 });
    expect(r.stdout).toBe("done\n");
    expect(r.error).toBeUndefined();
  });

  test("`mcp --timeout S` sets the default foreground timeout", async () => {
    const t = await startServer({ args: ["--timeout", "1"] });
    try {
      const marker = uniqueSleep(30);
      const r = await t.call("bash", { command: `sleep ${marker}` });
      expect(r.error_code).toBe("TIMEOUT");
      expect(r.error).toBe("Command timed out after 1 seconds");
      expect(r.context.timeout_seconds).toBe(1);
      expect(await waitNoProcess(`sleep ${marker}`, 3000)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("bash background start", () => {
  test("run_in_background returns {command, task_id: 'bg-N', status: 'running', description, pid} at once", async () => {
    const marker = uniqueSleep(300); // outlasts the test: a start that waited for it would fail it
    const r = await s.call("bash", { command: `sleep ${marker}`, run_in_background: true, description: "bg sleep" });
    expect(r.command).toBe(`sleep ${marker}`);
    expect(r.task_id).toMatch(/^bg-\d+$/);
    expect(r.status).toBe("running");
    expect(r.description).toBe("bg sleep");
    expect(typeof r.pid).toBe("number");
    // It is running: it appears in ps once its exec has happened.
    await waitForExec(`sleep ${marker}`);
    expect(processesMatching(`sleep ${marker}`).map((p) => p.cmdline)).toEqual([`sleep ${marker}`]);
    await s.call("kill_shell", { task_id: r.task_id });
    expect(processesMatching(`sleep ${marker}`)).toEqual([]);
  });

  test("`stdin` text reaches a background command too", async () => {
    const { task_id } = await s.call("bash", { command: "cat", stdin: "to the background", run_in_background: true });
    const r = await s.call("task_output", { task_id, wait: true, timeout: 10 });
    expect(r.stdout).toBe("to the background");
  });

  test("two background calls get distinct, increasing bg- ids", async () => {
    const a = await s.call("bash", { command: "true", run_in_background: true });
    const b = await s.call("bash", { command: "true", run_in_background: true });
    expect(a.task_id).toMatch(/^bg-\d+$/);
    expect(b.task_id).toMatch(/^bg-\d+$/);
    expect(Number(b.task_id.slice(3))).toBeGreaterThan(Number(a.task_id.slice(3)));
  });

  test("ids start at bg-1 in a fresh server", async () => {
    const t = await startServer();
    try {
      const r = await t.call("bash", { command: "true", run_in_background: true });
      expect(r.task_id).toBe("bg-1");
      const r2 = await t.call("bash", { command: "true", run_in_background: true });
      expect(r2.task_id).toBe("bg-2");
    } finally {
      await t.close();
    }
  });
});

describe("bash under pressure", () => {
  test("a foreground flood of 100 MB on stdout and stderr at once finishes, truncated, with the right totals", async () => {
    const r = await s.call("bash", {
      command: "yes out | head -c 50000000 & yes err | head -c 50000000 >&2; wait",
      timeout_seconds: 60,
    });
    expect(r.exit_code).toBe(0);
    expect(splitTruncated(r.stdout).marker).toContain("50000000");
    expect(splitTruncated(r.stderr).marker).toContain("50000000");
  }, 90_000);

  test("foreground calls on one server run concurrently, not one after another", async () => {
    // Each call ends only once all three have begun: run one after another, the first would time out.
    const all = "[ -e together-1 ] && [ -e together-2 ] && [ -e together-3 ]";
    const results = await Promise.all([1, 2, 3].map((i) => s.call("bash", { command: `touch together-${i}; until ${all}; do sleep 0.05; done; echo ${i}`, timeout_seconds: 30 })));
    expect(results.map((r) => r.stdout)).toEqual(["1\n", "2\n", "3\n"]);
  });

  test("an exit code above 128 from `exit` is a plain exit code, with no signal field", async () => {
    const r = await unsandboxed.call("bash", { command: "exit 143" });
    expect(r.exit_code).toBe(143);
    expect("signal" in r).toBe(false);
  });

  test("a UTF-8 character split across two writes is decoded whole", async () => {
    const r = await s.call("bash", { command: "printf '\\xc3'; sleep 0.2; printf '\\xa9\\n'" });
    expect(r.stdout).toBe("é\n");
  });

  test("timeout_seconds does not limit a background task", async () => {
    const { task_id } = await s.call("bash", { command: "sleep 1.5; echo done", run_in_background: true, timeout_seconds: 1 });
    const r = await s.call("task_output", { task_id, wait: true, timeout: 10 });
    expect(r.status).toBe("completed");
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toBe("done\n");
  });

  test("the background result's pid leads the command's process group, and a signal sent to it alone reaches the command", async () => {
    const { task_id, pid } = await unsandboxed.call("bash", { command: "cut -d' ' -f5 /proc/$$/stat; exec sleep 30", run_in_background: true, ready_pattern: "^\\d+$" });
    expect((await unsandboxed.call("task_output", { task_id })).stdout).toBe(`${pid}\n`);
    process.kill(pid, "SIGTERM");
    const r = await unsandboxed.call("task_output", { task_id, wait: true, timeout: 5 });
    expect(r).toMatchObject({ exit_code: -1, signal: "SIGTERM" });
  });
});

