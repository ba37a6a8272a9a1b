import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type McpSession, startServer } from "../helpers/mcp.ts";
import { processesMatching, uniqueSleep, waitNoProcess, waitSessionGone } from "../helpers/procs.ts";

let s: McpSession;
const pids: number[] = [];
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
  // Every tty session any test started is gone once the server is.
  for (const pid of pids) expect(await waitSessionGone(pid)).toEqual([]);
});

/** Starts a background tty task and remembers its session for the leak check. */
async function startTty(command: string, extra: Record<string, unknown> = {}) {
  const r = await s.call("bash", { command, tty: true, run_in_background: true, ...extra });
  expect(r.status).toBe("running");
  pids.push(r.pid);
  return r as { task_id: string; pid: number; screen: string };
}

/**
 * Polls the task with write_stdin (each call returns the output after the read cursor, as
 * soon as it settles) until the accumulated output or the screen matches `re`, or the task ends.
 */
async function readUntil(id: string, re: RegExp, ms = 20_000): Promise<{ text: string; last: any }> {
  let text = "";
  let last: any;
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    last = await s.call("write_stdin", { task_id: id, yield_ms: 1000 });
    text += last.output;
    if (re.test(text) || re.test(last.screen ?? "") || last.status !== "running") break;
  }
  return { text, last };
}

const ESC = "\x1b";

describe("tty: the child sees a terminal", () => {
  test("[ -t 0 ] and [ -t 1 ] hold, tput reports cols 50 x rows 20, TERM is xterm-256color", async () => {
    const r = await s.call("bash", { command: "[ -t 0 ] && [ -t 1 ] && echo is-a-tty; tput cols; tput lines; echo $TERM", tty: true, cols: 50, rows: 20 });
    expect(r).toMatchObject({ exit_code: 0, success: true, stdout: "is-a-tty\n50\n20\nxterm-256color\n", stderr: "" });
    expect(r.screen).toBe("is-a-tty\n50\n20\nxterm-256color");
  }, 60_000);

  test("default size is 120x30; env TERM wins over the default", async () => {
    const r = await s.call("bash", { command: "tput cols; tput lines; echo $TERM", tty: true, env: { TERM: "vt100" } });
    expect(r.stdout).toBe("120\n30\nvt100\n");
  }, 60_000);

  test("stderr arrives merged in stdout; stderr is empty", async () => {
    const r = await s.call("bash", { command: "echo to-out; echo to-err >&2; exit 3", tty: true });
    expect(r).toMatchObject({ exit_code: 3, success: false, stdout: "to-out\nto-err\n", stderr: "" });
  }, 60_000);

  test("without tty there is no terminal and no screen", async () => {
    const r = await s.call("bash", { command: "[ -t 1 ] && echo tty || echo no-tty" });
    expect(r.stdout).toBe("no-tty\n");
    expect(r.screen).toBeUndefined();
  }, 60_000);
});

describe("tty: rendering through a headless terminal", () => {
  test("a 100-step progress bar redrawn with \\r: stdout holds the final line once, no ESC in stdout or screen", async () => {
    const cmd =
      "for i in $(seq 1 100); do printf '\\r\\033[32m[%-20s]\\033[0m %3d%%' \"$(printf '#%.0s' $(seq 1 $((i / 5))))\" $i; done; echo; echo finished";
    const r = await s.call("bash", { command: cmd, tty: true });
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toBe("[####################] 100%\nfinished\n");
    expect(r.stdout.split("100%").length).toBe(2);
    expect(r.stdout).not.toContain(ESC);
    expect(r.screen).not.toContain(ESC);
    expect(r.screen).toBe("[####################] 100%\nfinished");
  }, 60_000);

  test("cursor movement and erase are applied as a terminal would", async () => {
    // Write two lines, go up one, erase it, write over it.
    const r = await s.call("bash", { command: "printf 'one\\ntwo\\n\\033[1A\\033[2KTWO!\\n'", tty: true });
    expect(r.stdout).toBe("one\nTWO!\n");
  }, 60_000);

  test("long output scrolls into the text in order; lines wider than the terminal are not split", async () => {
    const wide = "x".repeat(150);
    const r = await s.call("bash", { command: `seq 1 3000; echo ${wide}; echo end`, tty: true, cols: 80, max_output_bytes: 100_000 });
    const expected = `${Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("")}${wide}\nend\n`;
    expect(r.stdout).toBe(expected);
  }, 60_000);

  test("output beyond the scrollback and memory limits: head and tail kept, full text readable by offset", async () => {
    const r = await startTty("seq 1 200000");
    // Plain head and tail (shaping would fold the similar lines).
    const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 60, output: "raw" });
    expect(out.status).toBe("completed");
    const expected = Array.from({ length: 200000 }, (_, i) => `${i + 1}\n`).join("");
    expect(out.stdout_total_bytes).toBe(expected.length);
    expect(out.stdout_truncated).toBe(true);
    expect(out.stdout.startsWith("1\n2\n3\n")).toBe(true);
    expect(out.stdout.endsWith("199999\n200000\n")).toBe(true);
    const mid = 700_001;
    const range = await s.call("task_output", { task_id: r.task_id, offset: mid, length: 200 });
    expect(range.stdout).toBe(expected.slice(mid, mid + 200));
  }, 90_000);

  test("tail_lines, filter and only_new read the rendered text like any stream", async () => {
    const r = await startTty("seq 1 50");
    const end = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 20, tail_lines: 3 });
    expect(end).toMatchObject({ status: "completed", stdout: "48\n49\n50\n" });
    const f = await s.call("task_output", { task_id: r.task_id, filter: "^4\\d$" });
    expect(f.stdout).toBe(Array.from({ length: 10 }, (_, i) => `${40 + i}\n`).join(""));
    const fresh = await s.call("task_output", { task_id: r.task_id, only_new: true });
    expect(fresh.stdout).toBe("");
  }, 60_000);

  test("a full-screen program (less): screen shows the file's rows; keys scroll it; q quits", async () => {
    const file = join(s.cwd, "pty-less.txt");
    writeFileSync(file, Array.from({ length: 100 }, (_, i) => `row ${String(i + 1).padStart(3, "0")} of the file`).join("\n") + "\n");
    const r = await startTty(`less ${file}`, { rows: 10, cols: 60 });
    const first = await readUntil(r.task_id, /row 009/);
    expect(first.last.screen.split("\n").slice(0, 9)).toEqual(Array.from({ length: 9 }, (_, i) => `row ${String(i + 1).padStart(3, "0")} of the file`));
    const down = await s.call("write_stdin", { task_id: r.task_id, keys: ["down", "down"], yield_ms: 3000 });
    expect(down.screen.split("\n")[0]).toBe("row 003 of the file");
    expect(down.screen).not.toContain(ESC);
    const quit = await s.call("write_stdin", { task_id: r.task_id, chars: "q", yield_ms: 5000 });
    const end = quit.status === "running" ? await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 }) : quit;
    expect(end).toMatchObject({ status: "completed", exit_code: 0 });
  }, 60_000);
});

describe("tty: interactive programs with write_stdin", () => {
  test("python3 -i: print(6*7) gives 42; Ctrl-D ends it", async () => {
    const r = await startTty("python3 -i");
    await readUntil(r.task_id, />>> $/);
    const w = await s.call("write_stdin", { task_id: r.task_id, chars: "print(6*7)\n", yield_ms: 5000 });
    expect(w.bytes_written).toBe(11);
    const got = w.output.includes("42") ? w.output : w.output + (await readUntil(r.task_id, /42/)).text;
    expect(got).toContain("print(6*7)\n42\n");
    const eof = await s.call("write_stdin", { task_id: r.task_id, chars: "\u0004", yield_ms: 5000 });
    const end = eof.status === "running" ? await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 }) : eof;
    expect(end).toMatchObject({ status: "completed", exit_code: 0 });
    expect(end.screen).not.toContain(ESC);
  }, 60_000);

  test("read -p 'Name: ': writing Ada answers it", async () => {
    const r = await startTty(`read -p 'Name: ' n; echo "hi $n"`);
    await readUntil(r.task_id, /Name: $/);
    const w = await s.call("write_stdin", { task_id: r.task_id, chars: "Ada\n", yield_ms: 5000 });
    const text = w.output + (w.status === "running" ? (await readUntil(r.task_id, /hi Ada/)).text : "");
    expect(text).toContain("hi Ada");
    const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    expect(out).toMatchObject({ status: "completed", exit_code: 0, stdout: "Name: Ada\nhi Ada\n" });
  }, 60_000);

  test("a password prompt (read -s): the typed secret is not echoed", async () => {
    const r = await startTty(`read -s -p 'Password: ' pw; echo; echo "got \${#pw} chars"`);
    await readUntil(r.task_id, /Password: $/);
    await s.call("write_stdin", { task_id: r.task_id, chars: "hunter2-secret\n", yield_ms: 2000 });
    const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    expect(out.status).toBe("completed");
    expect(out.stdout).toBe("Password:\ngot 14 chars\n");
    expect(out.stdout).not.toContain("hunter2");
    expect(out.screen).not.toContain("hunter2");
  }, 60_000);

  test("bash -i running sleep: ctrl-c interrupts it and the prompt returns; exit ends the shell", async () => {
    const marker = uniqueSleep();
    // (a non-interactive bash drops PS1 from its environment: set it on the command line)
    const r = await startTty("PS1='READY$ ' exec bash --norc --noprofile -i");
    await readUntil(r.task_id, /READY\$ $/);
    await s.call("write_stdin", { task_id: r.task_id, chars: `sleep ${marker}\n`, yield_ms: 500 });
    for (let i = 0; i < 100 && processesMatching(`sleep ${marker}`).length === 0; i++) await Bun.sleep(20);
    expect(processesMatching(`sleep ${marker}`).length).toBe(1);
    const c = await s.call("write_stdin", { task_id: r.task_id, keys: ["ctrl-c"], yield_ms: 3000 });
    const text = c.output + (/READY\$ $/.test(c.output) ? "" : (await readUntil(r.task_id, /READY\$ $/)).text);
    expect(text).toMatch(/\^C\s*\nREADY\$ $/);
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
    const exit = await s.call("write_stdin", { task_id: r.task_id, chars: "exit 7\n", yield_ms: 5000 });
    const end = exit.status === "running" ? await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 }) : exit;
    expect(end).toMatchObject({ status: "completed", exit_code: 7 });
  }, 60_000);

  test("ctrl-c (\\u0003) to a sandboxed program that handles SIGINT and exits 0 reports exit_code 0", async () => {
    const r = await startTty(
      `python3 -c 'import signal, sys, time
signal.signal(signal.SIGINT, lambda *a: (print("cleaned up", flush=True), sys.exit(0)))
print("ready", flush=True)
time.sleep(60)'`,
    );
    expect(r).toMatchObject({ status: "running" });
    expect((await s.call("task_output", { task_id: r.task_id })).sandbox).toBe("workspace-write");
    await readUntil(r.task_id, /ready/);
    await s.call("write_stdin", { task_id: r.task_id, chars: "\u0003", yield_ms: 200 });
    const end = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    expect(end).toMatchObject({ status: "completed", exit_code: 0 });
    expect(end.signal).toBeUndefined();
    expect(end.stdout).toContain("cleaned up");
  }, 60_000);

  test("ctrl-c to a sandboxed shell script with an INT trap runs the trap and keeps its exit code", async () => {
    const r = await startTty(`trap 'echo trapped; exit 3' INT; echo ready; while :; do sleep 0.05; done`);
    await readUntil(r.task_id, /ready/);
    await s.call("write_stdin", { task_id: r.task_id, keys: ["ctrl-c"], yield_ms: 200 });
    const end = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    expect(end).toMatchObject({ status: "completed", exit_code: 3 });
    expect(end.stdout).toContain("trapped");
  }, 60_000);

  test("ctrl-c to a sandboxed program with no handler still ends it as killed by SIGINT", async () => {
    const marker = uniqueSleep();
    const r = await startTty(`echo ready; sleep ${marker}`);
    await readUntil(r.task_id, /ready/);
    for (let i = 0; i < 100 && processesMatching(`sleep ${marker}`).length === 0; i++) await Bun.sleep(20);
    await s.call("write_stdin", { task_id: r.task_id, keys: ["ctrl-c"], yield_ms: 200 });
    const end = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    expect(end).toMatchObject({ status: "completed", signal: "SIGINT" });
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
  }, 60_000);

  test("stdin text on a tty is typed, then EOF (Ctrl-D) ends cat", async () => {
    const r = await s.call("bash", { command: "cat", tty: true, stdin: "abc\n", timeout_seconds: 20 });
    expect(r.exit_code).toBe(0);
    // The terminal echoes the typed line, then cat prints it.
    expect(r.stdout).toBe("abc\nabc\n");
  }, 60_000);

  test("waiting_for_input: python input('Continue? [y/N] ') in the foreground comes back as a background task at its prompt", async () => {
    const r = await s.call("bash", { command: `python3 -c "print('yes' if input('Continue? [y/N] ') == 'y' else 'no')"`, tty: true, timeout_seconds: 60 });
    pids.push(r.pid);
    expect(r).toMatchObject({ status: "running", backgrounded: true, waiting_for_input: true, prompt: "Continue? [y/N]" });
    expect(r.task_id).toMatch(/^bg-\d+$/);
    expect(r.stdout).toBe("Continue? [y/N] ");
    const out = await s.call("task_output", { task_id: r.task_id });
    expect(out).toMatchObject({ status: "running", waiting_for_input: true, prompt: "Continue? [y/N]" });
    const w = await s.call("write_stdin", { task_id: r.task_id, chars: "y\n", yield_ms: 5000 });
    expect(w.waiting_for_input).toBeUndefined();
    const end = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    expect(end).toMatchObject({ status: "completed", exit_code: 0, stdout: "Continue? [y/N] y\nyes\n" });
    expect(end.waiting_for_input).toBeUndefined();
  }, 60_000);

  test("a busy or silent program without a prompt is not reported as waiting", async () => {
    const r = await startTty("echo working on it; sleep 30");
    await Bun.sleep(2600);
    const out = await s.call("task_output", { task_id: r.task_id });
    expect(out.status).toBe("running");
    expect(out.waiting_for_input).toBeUndefined();
    await s.call("kill_shell", { task_id: r.task_id });
  }, 60_000);

  test("a prompt-like line followed by a pause is not a prompt when nothing reads stdin (foreground not handed over)", async () => {
    const r = await s.call("bash", { command: "echo Loading:; sleep 3; echo done", tty: true });
    expect(r).toMatchObject({ exit_code: 0, stdout: "Loading:\ndone\n" });
    expect(r.backgrounded).toBeUndefined();
  }, 60_000);
});

describe("tty: services", () => {
  test("ready_pattern sees a line still on the screen", async () => {
    const r = await startTty(`echo starting; sleep 0.3; echo "Listening on 4321"; sleep ${uniqueSleep()}`, { ready_pattern: "Listening on \\d+", ready_timeout_seconds: 20 });
    expect(r).toMatchObject({ status: "running", ready: true });
    await s.call("kill_shell", { task_id: r.task_id });
  }, 60_000);
});

describe("write_stdin errors", () => {
  test("a task without tty or keep_stdin_open: INVALID_ARGUMENT saying how to start it", async () => {
    const r = await s.call("bash", { command: `sleep ${uniqueSleep()}`, run_in_background: true });
    pids.push(r.pid);
    const w = await s.callRaw("write_stdin", { task_id: r.task_id, chars: "x" });
    expect(w.isError).toBe(true);
    expect(w.structuredContent.error_code).toBe("INVALID_ARGUMENT");
    expect(w.structuredContent.error).toContain("tty: true");
    expect(w.structuredContent.error).toContain("keep_stdin_open: true");
    await s.call("kill_shell", { task_id: r.task_id });
  }, 60_000);

  test("unknown id: NOT_FOUND", async () => {
    const w = await s.call("write_stdin", { task_id: "bg-9999", chars: "x" });
    expect(w).toMatchObject({ error_code: "NOT_FOUND" });
    expect(w.error).toContain("bg-9999");
  }, 60_000);

  test("a finished task: its final status, no error", async () => {
    const r = await startTty("echo done-here; exit 4");
    await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
    const w = await s.callRaw("write_stdin", { task_id: r.task_id, chars: "late\n" });
    expect(w.isError).toBeFalsy();
    expect(w.structuredContent).toMatchObject({ task_id: r.task_id, bytes_written: 0, status: "completed", exit_code: 4 });
  }, 60_000);

  test("yield_ms above 10000 and unknown key names: INVALID_ARGUMENT naming them", async () => {
    const r = await startTty("sleep 30");
    const y = await s.call("write_stdin", { task_id: r.task_id, yield_ms: 10_001 });
    expect(y.error_code).toBe("INVALID_ARGUMENT");
    expect(y.error).toContain("yield_ms");
    const k = await s.call("write_stdin", { task_id: r.task_id, keys: ["enter", "hyperspace"] });
    expect(k.error_code).toBe("INVALID_ARGUMENT");
    expect(k.error).toContain("'hyperspace'");
    await s.call("kill_shell", { task_id: r.task_id });
  }, 60_000);

  test("cols/rows without tty, out-of-range cols: INVALID_ARGUMENT naming the field", async () => {
    const a = await s.call("bash", { command: "true", cols: 50 });
    expect(a.error_code).toBe("INVALID_ARGUMENT");
    expect(a.error).toContain("cols");
    const b = await s.call("bash", { command: "true", tty: true, cols: 5 });
    expect(b.error_code).toBe("INVALID_ARGUMENT");
    expect(b.error).toContain("cols");
  }, 60_000);
});

describe("tty: nothing left behind", () => {
  test("kill_shell ends an interactive shell and its background jobs (own process groups)", async () => {
    const marker = uniqueSleep();
    const r = await startTty("PS1='K$ ' exec bash --norc --noprofile -i");
    await readUntil(r.task_id, /K\$ $/);
    await s.call("write_stdin", { task_id: r.task_id, chars: `sleep ${marker} & sleep ${marker}\n`, yield_ms: 500 });
    for (let i = 0; i < 100 && processesMatching(`sleep ${marker}`).length < 2; i++) await Bun.sleep(20);
    expect(processesMatching(`sleep ${marker}`).length).toBe(2);
    const k = await s.call("kill_shell", { task_id: r.task_id });
    expect(k).toMatchObject({ status: "killed", success: true });
    expect(processesMatching(`sleep ${marker}`)).toEqual([]);
    expect(await waitSessionGone(r.pid, 100)).toEqual([]);
  }, 60_000);

  test("a foreground tty command that times out is killed with its whole session", async () => {
    const marker = uniqueSleep();
    const r = await s.call("bash", { command: `sleep ${marker} & sleep ${marker}`, tty: true, timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
  }, 60_000);

  test("cancelling a foreground tty call (MCP cancellation) kills its session", async () => {
    const marker = uniqueSleep();
    const abort = new AbortController();
    const call = s.call("bash", { command: `sleep ${marker} & sleep ${marker}`, tty: true }, { signal: abort.signal }).catch((e) => e);
    const sleeps = () => processesMatching(`sleep ${marker}`).filter((p) => p.cmdline === `sleep ${marker}`).length;
    for (let i = 0; i < 150 && sleeps() < 2; i++) await Bun.sleep(20);
    expect(sleeps()).toBe(2);
    abort.abort();
    await call;
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
  }, 60_000);

  test("kill -9 of the server: an interactive shell and its jobs are gone within 2 s", async () => {
    const other = await startServer();
    const marker = uniqueSleep();
    const r = await other.call("bash", { command: "PS1='W$ ' exec bash --norc --noprofile -i", tty: true, run_in_background: true });
    await other.call("write_stdin", { task_id: r.task_id, chars: `sleep ${marker} &\nsleep ${marker}\n`, yield_ms: 500 });
    for (let i = 0; i < 150 && processesMatching(`sleep ${marker}`).length < 2; i++) await Bun.sleep(20);
    expect(processesMatching(`sleep ${marker}`).length).toBe(2);
    process.kill(other.pid, "SIGKILL");
    expect(await waitNoProcess(`sleep ${marker}`, 2000)).toEqual([]);
    expect(await waitSessionGone(r.pid, 2000)).toEqual([]);
    await other.close();
  }, 60_000);

  test("closing the server ends running tty tasks", async () => {
    const other = await startServer();
    const marker = uniqueSleep();
    const r = await other.call("bash", { command: `sleep ${marker}`, tty: true, run_in_background: true });
    expect(r.status).toBe("running");
    await other.close();
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
    expect(await waitSessionGone(r.pid)).toEqual([]);
  }, 60_000);
});
