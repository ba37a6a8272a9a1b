import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { runCli } from "../helpers/cli.ts";
import { markersOf, reconstruct, shownBytes } from "../helpers/shaped-output.ts";

/**
 * What a model reads (SPEC §15), through the compiled binary over the MCP SDK client:
 * one budget for stdout and stderr, shaping, markers whose byte ranges task_output reads
 * back, output_task_id for foreground results, agent-aware children.
 */

setDefaultTimeout(120_000);

let s: McpSession;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
});

/** Both streams' shown bytes, besides marker lines. */
const shownTogether = (r: { stdout?: string; stderr?: string }) => shownBytes(r.stdout ?? "") + shownBytes(r.stderr ?? "");

/** Bytes [offset, end) of a task's stream, page by page as task_output returns them (following next_offset). */
async function readRange(taskId: string, stream: "stdout" | "stderr", offset: number, end?: number): Promise<string> {
  const parts: Buffer[] = [];
  for (let at: number | undefined = offset; at !== undefined; ) {
    const r = await s.call("task_output", { task_id: taskId, stream, offset: at, ...(end !== undefined ? { length: end - at } : {}) });
    parts.push(Buffer.from(r[stream]));
    at = r.next_offset;
  }
  return Buffer.concat(parts).toString();
}

/** Rebuilds a stream of a task from a shaped text and task_output range reads. */
function rebuildFrom(taskId: string, stream: "stdout" | "stderr", text: string): Promise<string> {
  return reconstruct(text, (offset, end) => readRange(taskId, stream, offset, end));
}

describe("short clean output", () => {
  test("is returned byte for byte, with no truncation fields, log paths or output task", async () => {
    const r = await s.call("bash", { command: "printf 'line one\\n\\ttabbed  \\r\\nno newline'; printf 'warn\\n' >&2" });
    expect(r.stdout).toBe("line one\n\ttabbed  \r\nno newline");
    expect(r.stderr).toBe("warn\n");
    for (const key of ["stdout_truncated", "stderr_truncated", "stdout_path", "stderr_path", "output_task_id", "stdout_total_bytes"]) expect(key in r).toBe(false);
  });
});

describe("the budget: 8,000 bytes for stdout and stderr together by default", () => {
  test("two floods share it; a result that left output out names its full output", async () => {
    // Random text: no two lines alike, so nothing folds.
    const r = await s.call("bash", { command: "head -c 150000 /dev/urandom | base64 -w 60; head -c 150000 /dev/urandom | base64 -w 70 >&2" });
    expect(shownTogether(r)).toBeLessThanOrEqual(8000);
    expect(shownTogether(r)).toBeGreaterThan(6000);
    expect(r.stdout_truncated).toBe(true);
    expect(r.stderr_truncated).toBe(true);
    expect(r.output_task_id).toMatch(/^bg-\d+$/);
    // Over MCP the way to the full output is output_task_id: the log paths are hidden from a model's commands.
    expect(r).not.toHaveProperty("stdout_path");
    expect(r).not.toHaveProperty("stderr_path");
    expect(Buffer.byteLength(await readRange(r.output_task_id, "stdout", 0))).toBe(r.stdout_total_bytes);
    expect(Buffer.byteLength(await readRange(r.output_task_id, "stderr", 0))).toBe(r.stderr_total_bytes);
    for (const m of markersOf(r.stdout)) expect(m.total).toBe(r.stdout_total_bytes);
    // The output task is a finished task of the registry, readable, though not a task the agent started: not listed.
    expect((await s.call("task_output", { task_id: r.output_task_id })).status).toBe("completed");
    const listed = await s.call("task_list", {});
    expect(listed.tasks.some((t: { task_id: string }) => t.task_id === r.output_task_id)).toBe(false);
  });

  test("max_output_bytes per call widens or narrows it", async () => {
    const command = "head -c 200000 /dev/urandom | base64 -w 80";
    const narrow = await s.call("bash", { command, max_output_bytes: 1000 });
    expect(shownTogether(narrow)).toBeLessThanOrEqual(1000);
    const wide = await s.call("bash", { command, max_output_bytes: 30_000 });
    expect(shownTogether(wide)).toBeLessThanOrEqual(30_000);
    expect(shownTogether(wide)).toBeGreaterThan(20_000);
    for (const bad of [999, 2_500_001]) {
      const e = await s.call("bash", { command: "true", max_output_bytes: bad });
      expect(e.error_code).toBe("INVALID_ARGUMENT");
      expect(e.error).toContain("max_output_bytes");
    }
  });

  test("config max_output_bytes sets it for every call", async () => {
    const own = await startServer({ env: { AGENT_SHELL_MAX_OUTPUT_BYTES: "2000" } });
    try {
      const r = await own.call("bash", { command: "head -c 200000 /dev/urandom | base64 -w 80" });
      expect(shownTogether(r)).toBeLessThanOrEqual(2000);
      expect(shownTogether(r)).toBeGreaterThan(1000);
    } finally {
      await own.close();
    }
  });

  test("a 200 MB flood comes back as under 10,000 characters of MCP text, its total named", async () => {
    const raw = await s.callRaw("bash", { command: "head -c 150000000 /dev/zero | tr '\\0' 'a' | fold -w 75 | awk '{print NR \": \" $0}' | head -c 200000000" });
    const text = raw.content[0].text as string;
    expect(text.length).toBeLessThan(10_000);
    const r = JSON.parse(text);
    expect(r.stdout_total_bytes).toBeGreaterThan(150_000_000);
    expect(r.output_task_id).toMatch(/^bg-\d+$/);
  });
});

describe("shaping keeps what matters", () => {
  test("an error line amid 20,000 similar progress lines survives with a line of context each side and the final summary", async () => {
    const r = await s.call("bash", {
      command: "for i in $(seq 1 20000); do echo \"[$i/20000] compiling module_$i\"; [ $i = 12345 ] && echo 'src/app.ts(41,7): error TS2322: Type string is not assignable to type number.'; done; echo 'Found 1 error. Watching for file changes.'",
    });
    expect(r.stdout).toContain("[12345/20000] compiling module_12345\nsrc/app.ts(41,7): error TS2322: Type string is not assignable to type number.\n[12346/20000] compiling module_12346\n");
    expect(r.stdout.endsWith("Found 1 error. Watching for file changes.\n")).toBe(true);
    expect(shownTogether(r)).toBeLessThanOrEqual(8000);
  });

  test("errors on both streams survive together", async () => {
    const script = [
      "for i in $(seq 1 3000); do echo \"(pass) suite > case $i [0.${i}ms]\"; done",
      "echo 'FAIL src/parser.test.ts > parses dates'",
      "echo 'AssertionError: expected 2024 to be 2025'",
      "for i in $(seq 1 3000); do echo \"INFO worker: handled job $i\"; done",
      "printf 'Traceback (most recent call last):\\n  File \"/srv/app/jobs.py\", line 88, in run\\nValueError: invalid literal for int()\\n'",
      "for i in $(seq 1 2000); do echo \"npm http fetch GET 200 https://registry.example/pkg-$i ${i}ms\" >&2; done",
      "printf 'npm ERR! code ERESOLVE\\nnpm ERR! ERESOLVE unable to resolve dependency tree\\nnpm ERR! Found: react@18.2.0\\n' >&2",
      "for i in $(seq 1 2000); do echo \"npm timing reify:unpack:pkg-$i Completed in ${i}ms\" >&2; done",
    ].join("; ");
    const r = await s.call("bash", { command: script });
    for (const needle of ["FAIL src/parser.test.ts > parses dates", "AssertionError: expected 2024 to be 2025", "Traceback (most recent call last):", "ValueError: invalid literal for int()"]) expect(r.stdout).toContain(needle);
    for (const needle of ["npm ERR! code ERESOLVE", "npm ERR! ERESOLVE unable to resolve dependency tree", "npm ERR! Found: react@18.2.0"]) expect(r.stderr).toContain(needle);
    expect(shownTogether(r)).toBeLessThanOrEqual(8000);
  });

  test("1,000 similar lines fold to first, marker, last", async () => {
    const r = await s.call("bash", { command: "for i in $(seq 1 1000); do echo \"ok $i - GET /api/items/$i 200 in ${i}ms\"; done" });
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("ok 1 - GET /api/items/1 200 in 1ms");
    expect(lines[1]).toMatch(/^\[… 998 similar lines truncated \(bytes \d+-\d+ of \d+ total\) …\]$/);
    expect(lines[2]).toBe("ok 1000 - GET /api/items/1000 200 in 1000ms");
    expect(lines.length).toBe(4);
  });

  test("100 coloured \\r redraws become one line in its final state, no escape or carriage return left", async () => {
    const r = await s.call("bash", { command: "for i in $(seq 1 100); do printf '\\r\\033[32mDownloading %3d%%\\033[0m \\033[1m%s\\033[0m' $i \"$(printf '#%.0s' $(seq 1 $((i / 10 + 1))))\"; done; echo" });
    expect(r.stdout).toBe("Downloading 100% ###########\n");
  });

  test("a 300 KB line between short lines shows its head and tail up to the budget, one marker between", async () => {
    const r = await s.call("bash", { command: "printf 'start\\n'; printf '<%.0s' $(seq 1 100); head -c 299800 /dev/zero | tr '\\0' m; printf '>%.0s' $(seq 1 100); printf '\\nend\\n'" });
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("start");
    expect(lines[1]).toBe("<".repeat(100) + "m".repeat(lines[1].length - 100));
    expect(lines[1].length).toBeGreaterThan(3500);
    expect(lines[2]).toBe(`[… part of 1 line truncated (bytes ${6 + lines[1].length}-${6 + 300_000 - lines[3].length} of ${r.stdout_total_bytes} total) …]`);
    expect(lines[3]).toBe("m".repeat(lines[3].length - 100) + ">".repeat(100));
    expect(lines[4]).toBe("end");
    expect(shownTogether(r)).toBeLessThanOrEqual(8000);
    expect(await rebuildFrom(r.output_task_id, "stdout", r.stdout)).toBe(`start\n${"<".repeat(100)}${"m".repeat(299800)}${">".repeat(100)}\nend\n`);
  });

  test("one long JSON line fills the budget with its head and tail; max_bytes 1,000 still shows a 20 MB line's start and end", async () => {
    const json = await s.call("bash", { command: `${process.execPath} -e 'console.log(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: "item " + i }))))'` });
    const [head, marker, tail] = json.stdout.split("\n");
    expect(head.startsWith('[{"id":0,"name":"item 0"}')).toBe(true);
    expect(marker).toMatch(/^\[… part of 1 line truncated/);
    expect(tail.endsWith('{"id":1999,"name":"item 1999"}]')).toBe(true);
    expect(shownTogether(json)).toBeGreaterThan(7800);
    expect(shownTogether(json)).toBeLessThanOrEqual(8000);
    const { task_id } = await s.call("bash", { command: "printf '{'; head -c 20000000 /dev/zero | tr '\\0' x; printf '}\\n'", run_in_background: true });
    const r = await s.call("task_output", { task_id, wait: true, max_bytes: 1000 });
    const [start, cut, end] = r.stdout.split("\n");
    expect(start).toMatch(/^\{x{200,}$/);
    expect(cut).toMatch(/^\[… part of 1 line truncated/);
    expect(end).toMatch(/^x{200,}\}$/);
    expect(shownTogether(r)).toBeLessThanOrEqual(1000);
  });

  test("5,000 lines of multi-byte text stay valid UTF-8", async () => {
    const r = await s.call("bash", { command: "awk 'BEGIN { for (i = 1; i <= 5000; i++) { s = \"\"; for (k = 0; k <= i % 9; k++) s = s \"é\"; print \"строка \" i \" — 日本語 \" s \" 🎉\" } }'" });
    expect(r.stdout).not.toContain("\uFFFD");
    expect(r.stdout_truncated).toBe(true);
    expect(Buffer.from(r.stdout).toString()).toBe(r.stdout);
  });
});

describe("markers and range reads", () => {
  test("for every marker a task_output range read returns exactly the omitted bytes; kept lines and ranges make up the whole output", async () => {
    const command = "for i in $(seq 1 3000); do case $((i % 7)) in 0) echo \"error: item $i failed\";; 1) echo \"warning: slow item $i\";; *) echo \"item $i ok $RANDOM\";; esac; done; echo 'summary: done'; for i in $(seq 1 500); do echo \"err line $i\" >&2; done";
    const r = await s.call("bash", { command, max_output_bytes: 3000 });
    expect(markersOf(r.stdout).length).toBeGreaterThan(1);
    const done = await s.call("task_output", { task_id: r.output_task_id });
    const full = readFileSync(done.stdout_path, "utf8");
    expect(await rebuildFrom(r.output_task_id, "stdout", r.stdout)).toBe(full);
    expect(await rebuildFrom(r.output_task_id, "stderr", r.stderr)).toBe(readFileSync(done.stderr_path, "utf8"));
    for (const m of markersOf(r.stdout)) {
      const read = await s.call("task_output", { task_id: r.output_task_id, offset: m.start, length: m.end - m.start, max_bytes: 1_000_000 });
      expect(read.stdout).toBe(Buffer.from(full).subarray(m.start, m.end).toString());
      expect(read).not.toHaveProperty("next_offset");
    }
  });

  test("range reads page: at most max_bytes raw bytes a call (default the budget), with next_offset while more was asked for", async () => {
    const { task_id } = await s.call("bash", { command: "seq 1 100000", run_in_background: true });
    const done = await s.call("task_output", { task_id, wait: true });
    const full = readFileSync(done.stdout_path, "utf8");
    const first = await s.call("task_output", { task_id, offset: 100, length: 145_644 });
    expect(first.stdout).toBe(full.slice(100, 8100));
    expect(first.next_offset).toBe(8100);
    const next = await s.call("task_output", { task_id, offset: first.next_offset, length: 100 + 145_644 - first.next_offset });
    expect(next.stdout).toBe(full.slice(8100, 16_100));
    expect(next.next_offset).toBe(16_100);
    const big = await s.call("task_output", { task_id, offset: 100, length: 145_644, max_bytes: 1_000_000 });
    expect(big.stdout).toBe(full.slice(100, 145_744));
    expect(big).not.toHaveProperty("next_offset");
    const small = await s.call("task_output", { task_id, offset: full.length - 50, max_bytes: 20 });
    expect(small.stdout).toBe(full.slice(-50, -30));
    expect(small.next_offset).toBe(full.length - 30);
    const last = await s.call("task_output", { task_id, offset: full.length - 30 });
    expect(last.stdout).toBe(full.slice(-30));
    expect(last).not.toHaveProperty("next_offset");
    expect(await readRange(task_id, "stdout", 0)).toBe(full);
  });

  test("range reads return the raw bytes, escapes and carriage returns unchanged; output: raw returns them too", async () => {
    const command = "for i in $(seq 1 2000); do printf '\\033[33mstep %d\\033[0m\\r\\n' $i; done";
    const shaped = await s.call("bash", { command });
    expect(shaped.stdout).not.toMatch(/[\x1b\r]/);
    const raw = Array.from({ length: 2000 }, (_, i) => `\x1b[33mstep ${i + 1}\x1b[0m\r\n`).join("");
    const read = await s.call("task_output", { task_id: shaped.output_task_id, offset: 0, length: 1_000_000, max_bytes: 1_000_000 });
    expect(read.stdout).toBe(raw);
    const plain = await s.call("bash", { command, output: "raw", max_output_bytes: 100_000 });
    expect(plain.stdout).toBe(raw);
    const cut = await s.call("bash", { command, output: "raw" });
    expect(cut.stdout.startsWith("\x1b[33mstep 1\x1b[0m\r\n")).toBe(true);
    expect(markersOf(cut.stdout).length).toBe(1);
    expect(await rebuildFrom(cut.output_task_id, "stdout", cut.stdout)).toBe(raw);
  });

  test("config output_shaping = false gives the plain head and tail", async () => {
    const own = await startServer({ env: { AGENT_SHELL_OUTPUT_SHAPING: "false" } });
    try {
      const r = await own.call("bash", { command: "for i in $(seq 1 2000); do printf '\\033[1mrow %d\\033[0m\\n' $i; done" });
      expect(r.stdout.startsWith("\x1b[1mrow 1\x1b[0m\n")).toBe(true);
      expect(markersOf(r.stdout).length).toBe(1);
    } finally {
      await own.close();
    }
  });
});

describe("every path shapes the same way", () => {
  const noisy = "for i in $(seq 1 20000); do echo \"[$i/20000] compiling module_$i\"; [ $i = 7777 ] && echo 'lib.c:12:3: error: expected ; before }'; done; echo 'make: *** [all] Error 1'";

  test("task_output, plain and with wait", async () => {
    const { task_id } = await s.call("bash", { command: noisy, run_in_background: true });
    const waited = await s.call("task_output", { task_id, wait: true, timeout: 60 });
    const again = await s.call("task_output", { task_id });
    for (const r of [waited, again]) {
      expect(r.stdout).toContain("[7777/20000] compiling module_7777\nlib.c:12:3: error: expected ; before }\n[7778/20000] compiling module_7778\n");
      expect(r.stdout.endsWith("make: *** [all] Error 1\n")).toBe(true);
      expect(shownTogether(r)).toBeLessThanOrEqual(8000);
    }
    expect(await rebuildFrom(task_id, "stdout", again.stdout)).toBe(readFileSync(again.stdout_path, "utf8"));
  });

  test("task_output max_bytes is the budget for both streams", async () => {
    const { task_id } = await s.call("bash", { command: "seq 1 5000 | sed 's/^/out /'; seq 1 5000 | sed 's/^/err /;s/$/ x/' >&2", run_in_background: true });
    const r = await s.call("task_output", { task_id, wait: true, max_bytes: 1500, output: "raw" });
    expect(shownTogether(r)).toBeLessThanOrEqual(1500);
    expect(r.stdout_truncated && r.stderr_truncated).toBe(true);
  });

  test("task_output over several tasks: all their streams share one budget", async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await s.call("bash", { command: "head -c 60000 /dev/urandom | base64 -w 64; head -c 30000 /dev/urandom | base64 -w 64 >&2", run_in_background: true })).task_id);
    const r = await s.call("task_output", { task_ids: ids, wait: true, until: "all", timeout: 30 });
    expect(r.results.length).toBe(3);
    const shown = r.results.reduce((n: number, one: { stdout?: string; stderr?: string }) => n + shownTogether(one), 0);
    expect(shown).toBeLessThanOrEqual(8000);
    for (const one of r.results) expect(shownTogether(one)).toBeGreaterThan(1000);
  });

  test("the TIMEOUT error's output is shaped too, and its full output stays readable", async () => {
    const r = await s.call("bash", { command: `${noisy}; sleep 30`, timeout_seconds: 3 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(r.context.stdout).toContain("lib.c:12:3: error: expected ; before }\n");
    expect(shownTogether(r.context)).toBeLessThanOrEqual(8000);
    expect(r.context).not.toHaveProperty("stdout_path");
    expect(await rebuildFrom(r.context.output_task_id, "stdout", r.context.stdout)).toBe(await readRange(r.context.output_task_id, "stdout", 0));
  });

  test("a tty task's screen stays within the budget", async () => {
    const r = await s.call("bash", { command: "head -c 20000 /dev/urandom | base64 -w 190 | head -n 60", tty: true, cols: 200, rows: 60, max_output_bytes: 4000 });
    expect(Buffer.byteLength(r.screen)).toBeGreaterThan(4000 / 2);
    expect(shownBytes(r.screen)).toBeLessThanOrEqual(4000);
    expect(markersOf(r.screen).length).toBeGreaterThan(0);
    expect(shownTogether(r)).toBeLessThanOrEqual(4000);
  });

  test("the CLI's call shapes the same way, and names the log files", async () => {
    const state = mkdtempSync(join(tmpdir(), "as-shape-cli-"));
    try {
      const out = await runCli(["call", "bash", JSON.stringify({ command: "for i in $(seq 1 1000); do echo \"tick $i\"; done" }), "--state-dir", state]);
      const r = JSON.parse(out.stdout);
      expect(r.stdout).toBe("tick 1\n[… 998 similar lines truncated (bytes 7-8883 of 8893 total) …]\ntick 1000\n");
      // A person's CLI reads the log files: its results name them (this one-off call's are gone with it).
      expect(r.stdout_path).toMatch(/\/stdout\.log$/);
      expect(r.stderr_path).toMatch(/\/stderr\.log$/);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});

describe("agent-aware children", () => {
  test("commands get AGENT, AI_AGENT, NO_COLOR and npm's quiet settings; env overrides them", async () => {
    const r = await s.call("bash", { command: "echo \"$AGENT|$AI_AGENT|$NO_COLOR|$npm_config_fund|$npm_config_update_notifier\"" });
    expect(r.stdout).toBe("1|agent-shell|1|false|false\n");
    const overridden = await s.call("bash", { command: "echo \"$AGENT|$NO_COLOR\"", env: { AGENT: "0", NO_COLOR: "" } });
    expect(overridden.stdout).toBe("0|\n");
  });

  test("config agent_env = false leaves the environment as inherited", async () => {
    const own = await startServer({ env: { AGENT_SHELL_AGENT_ENV: "false", AGENT: "", AI_AGENT: "" } });
    try {
      const r = await own.call("bash", { command: "echo \"[$AGENT|$AI_AGENT]\"" });
      expect(r.stdout).toBe("[|]\n");
    } finally {
      await own.close();
    }
  });

  test("a real failing bun test run of 400 passing and 2 failing tests keeps both failing names, expected/received values and the summary within the budget", async () => {
    let file = 'import { describe, expect, test } from "bun:test";\ndescribe("math", () => {\n';
    for (let i = 0; i < 400; i++) file += `  test("adds ${i}", () => { expect(${i} + 1).toBe(${i + 1}); });\n`;
    file += '  test("broken sum", () => { expect(2 + 2).toBe(5); });\n  test("broken greeting", () => { expect("hello world").toEqual("hello there"); });\n});\n';
    writeFileSync(join(s.cwd, "math.test.ts"), file);
    for (const agentEnv of [{}, { AGENT: "0" }]) {
      // With and without the agent variables (AGENT=0: bun's full report): shaping keeps the same facts.
      const r = await s.call("bash", { command: `${process.execPath} test ./math.test.ts`, env: { ...agentEnv, CLAUDECODE: "", REPL_ID: "" }, timeout_seconds: 60 });
      expect(r.exit_code).toBe(1);
      const all = r.stdout + r.stderr;
      for (const needle of ["math > broken sum", "math > broken greeting", "Expected: 5", "Received: 4", 'Expected: "hello there"', 'Received: "hello world"', "400 pass", "2 fail"]) expect(all).toContain(needle);
      expect(shownTogether(r)).toBeLessThanOrEqual(8000);
    }
  });

  test("a real failing node --test run (TAP, 3 files, 300 passing, 2 failing): both not ok lines and their expected/actual lines survive, passing blocks fold", async () => {
    const dir = mkdtempSync(join(s.cwd, "tap-"));
    try {
      const header = 'const test = require("node:test");\nconst assert = require("node:assert");\n';
      const passing = (name: string, from: number, to: number) => `for (let i = ${from}; i < ${to}; i++) test("${name} adds " + i, () => assert.strictEqual(i + 1, 1 + i));\n`;
      writeFileSync(join(dir, "a.test.js"), header + passing("a", 0, 100));
      writeFileSync(join(dir, "b.test.js"), header + passing("b", 0, 50) + 'test("scale keeps integers", () => assert.strictEqual(4.5, 4));\n' + passing("b", 50, 100));
      writeFileSync(join(dir, "c.test.js"), header + passing("c", 0, 100) + 'test("parse keeps names", () => assert.deepStrictEqual({ name: "a" }, { name: "b" }));\n');
      const r = await s.call("bash", { command: "node --test --test-reporter=tap", working_directory: dir, timeout_seconds: 60 });
      expect(r.exit_code).toBe(1);
      expect(r.stdout_total_bytes).toBeGreaterThan(16_000);
      for (const needle of ["not ok 151 - scale keeps integers", "4.5 !== 4", "expected: 4", "actual: 4.5", "not ok 302 - parse keeps names", "+   name: 'a'", "-   name: 'b'", "# pass 300", "# fail 2"]) expect(r.stdout).toContain(needle);
      // The 5-line record of each passing test folds: a marker for similar lines stands for most of them.
      const folded = markersOf(r.stdout).filter((m) => m.line.includes("similar lines"));
      expect(folded.length).toBeGreaterThan(0);
      expect(r.stdout.match(/^ok \d+ /gm)!.length).toBeLessThan(30);
      expect(shownTogether(r)).toBeLessThanOrEqual(8000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
