import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { shapeOutput, type ByteSource } from "../../src/background/output/index.ts";
import { renderLine } from "../../src/background/output/shape/index.ts";
import { markersOf, reconstruct, shownBytes } from "../helpers/shaped-output.ts";

/** Pure-logic tests of what a model reads (SPEC §15), on synthetic and recorded outputs. */

const encoder = new TextEncoder();
const fixture = (name: string) => readFileSync(join(import.meta.dir, "../fixtures/output", name));

function source(data: string | Uint8Array): ByteSource & { bytes: Uint8Array } {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return { bytes, total: bytes.byteLength, read: (a, b) => bytes.subarray(a, Math.min(b, bytes.byteLength)) };
}

function shape(stdout: string | Uint8Array, stderr: string | Uint8Array = "", opts: { budget?: number; raw?: boolean } = {}) {
  const streams = [source(stdout), source(stderr)];
  const [out, err] = shapeOutput(
    streams.map((s) => ({ source: s, start: 0, end: s.total })),
    { budget: opts.budget ?? 8000, raw: opts.raw },
  );
  return { out: out!, err: err!, streams };
}

const decoder = new TextDecoder();
async function accountsForAll(text: string, raw: Uint8Array): Promise<void> {
  const rebuilt = await reconstruct(text, (a, b) => decoder.decode(raw.subarray(a, b)));
  expect(rebuilt).toBe(decoder.decode(raw));
}

describe("output that fits", () => {
  test("is returned byte for byte, with or without a final newline", () => {
    for (const text of ["", "hello\n", "no newline", "tab\there\r\n  spaces  \n", "é🎉\n".repeat(100)]) {
      const { out } = shape(text, "err\n");
      expect(out.text).toBe(text);
      expect(out.truncated).toBe(false);
    }
  });

  test("terminal control is rendered even when it fits: 100 coloured \\r redraws become one line in its final state", () => {
    let redraws = "";
    for (let i = 1; i <= 100; i++) redraws += `\r\x1b[32mDownloading ${i}%\x1b[0m \x1b[1m[${"#".repeat(i >> 2)}]\x1b[0m`;
    const { out } = shape(`${redraws}\ndone\n`);
    expect(out.text).toBe(`Downloading 100% [${"#".repeat(25)}]\ndone\n`);
    expect(out.text).not.toMatch(/[\x1b\r]/);
    expect(out.truncated).toBe(false);
  });
});

describe("terminal control", () => {
  test.each([
    ["\x1b[31mred\x1b[0m", "red"],
    ["50%\r100%", "100%"],
    ["abcdef\rXY", "XYcdef"],
    ["abcdef\r\x1b[KXY", "XY"],
    ["abc\x1b[2K\rnew", "new"],
    ["ab\bc", "ac"],
    ["\x1b]0;title\x07text", "text"],
    ["\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"],
    ["\x1b(Bplain\x07", "plain"],
    ["crlf\r", "crlf"],
    ["é🎉\rx", "x🎉"],
  ])("%j renders as %j", (raw, shown) => {
    expect(renderLine(raw)).toBe(shown);
  });
});

describe("folding repeats", () => {
  test("1,000 similar lines fold to first, one marker with the count, last", async () => {
    const raw = Array.from({ length: 1000 }, (_, i) => `ok ${i} - request 0x${(i * 7919).toString(16)} served in ${i % 97}ms`).join("\n") + "\n";
    const { out } = shape(raw);
    const lines = out.text.split("\n");
    expect(lines.length).toBe(4);
    expect(lines[0]).toBe(raw.split("\n")[0]!);
    expect(lines[1]).toMatch(/^\[… 998 similar lines truncated \(bytes \d+-\d+ of \d+ total\) …\]$/);
    expect(lines[2]).toBe(raw.split("\n")[999]!);
    await accountsForAll(out.text, encoder.encode(raw));
  });

  test("a block of lines repeated 300 times folds to first block, one marker, last block", () => {
    const raw = Array.from({ length: 300 }, (_, i) => `# Subtest: adds ${i}\nok ${i + 1} - adds ${i}\n  ---\n  duration_ms: 0.${i}7\n  ...\n`).join("") + "1..300\n";
    const { out } = shape(raw, "", { budget: 1000 });
    const lines = out.text.split("\n");
    expect(lines.slice(0, 5)).toEqual(["# Subtest: adds 0", "ok 1 - adds 0", "  ---", "  duration_ms: 0.07", "  ..."]);
    expect(lines[5]).toMatch(/^\[… 1490 similar lines truncated/);
    expect(lines.slice(6)).toEqual(["# Subtest: adds 299", "ok 300 - adds 299", "  ---", "  duration_ms: 0.2997", "  ...", "1..300", ""]);
  });

  test("an error line and its context are never folded away", () => {
    const lines = Array.from({ length: 600 }, (_, i) => `[${i}/600] compiling`);
    lines.splice(300, 0, "src/main.rs:12:5: error[E0308]: mismatched types");
    const { out } = shape(lines.join("\n") + "\n", "", { budget: 1000 });
    expect(out.text).toContain("[298/600] compiling\n[299/600] compiling\nsrc/main.rs:12:5: error[E0308]: mismatched types\n[300/600] compiling\n[301/600] compiling\n");
  });
});

describe("choosing lines under the budget", () => {
  test("an error line amid 20,000 similar progress lines survives with context each side and the final summary", async () => {
    const lines = Array.from({ length: 20000 }, (_, i) => `progress: built ${i} of 20000 modules (${(i * 13) % 100}%)`);
    lines.splice(12345, 0, "src/app.ts(41,7): error TS2322: Type 'string' is not assignable to type 'number'.");
    lines.push("Build failed: 1 error in 8.2s");
    const raw = lines.join("\n") + "\n";
    const { out } = shape(raw);
    expect(out.truncated).toBe(true);
    expect(out.text).toContain(`${lines[12344]}\n${lines[12345]}\n${lines[12346]}\n`);
    expect(out.text.endsWith("Build failed: 1 error in 8.2s\n")).toBe(true);
    expect(shownBytes(out.text)).toBeLessThanOrEqual(8000);
    await accountsForAll(out.text, encoder.encode(raw));
  });

  test("errors on both streams survive together", () => {
    const stdout = [
      ...Array.from({ length: 3000 }, (_, i) => `(pass) suite > case ${i} [0.${i % 10}ms]`),
      "FAIL src/parser.test.ts > parses dates",
      "AssertionError: expected 2024 to be 2025",
      ...Array.from({ length: 3000 }, (_, i) => `INFO worker: handled job ${i}`),
      "Traceback (most recent call last):",
      '  File "/srv/app/jobs.py", line 88, in run',
      "    total = int(row['amount'])",
      "ValueError: invalid literal for int() with base 10: 'n/a'",
      ...Array.from({ length: 3000 }, (_, i) => `INFO worker: idle tick ${i}`),
    ].join("\n") + "\n";
    const stderr = [
      ...Array.from({ length: 2000 }, (_, i) => `npm http fetch GET 200 https://registry.npmjs.org/pkg-${i} ${i % 50}ms (cache hit)`),
      "npm ERR! code ERESOLVE",
      "npm ERR! ERESOLVE unable to resolve dependency tree",
      "npm ERR! Found: react@18.2.0",
      ...Array.from({ length: 2000 }, (_, i) => `npm timing reify:unpack:pkg-${i} Completed in ${i % 30}ms`),
    ].join("\n") + "\n";
    const { out, err } = shape(stdout, stderr);
    for (const needle of ["FAIL src/parser.test.ts > parses dates", "AssertionError: expected 2024 to be 2025", "Traceback (most recent call last):", "ValueError: invalid literal"]) {
      expect(out.text).toContain(needle);
    }
    for (const needle of ["npm ERR! code ERESOLVE", "npm ERR! ERESOLVE unable to resolve dependency tree", "npm ERR! Found: react@18.2.0"]) expect(err.text).toContain(needle);
    expect(shownBytes(out.text) + shownBytes(err.text)).toBeLessThanOrEqual(8000);
  });

  test("the budget is shared: a short stream stays whole next to a flood", () => {
    const { out, err } = shape(Array.from({ length: 50000 }, (_, i) => `row ${i} ${"x".repeat(i % 40)}`).join("\n"), "warning: disk almost full\n");
    expect(err.text).toBe("warning: disk almost full\n");
    expect(shownBytes(out.text) + shownBytes(err.text)).toBeLessThanOrEqual(8000);
  });

  test("every marker names a byte range whose bytes, with the kept lines, make up the whole output", async () => {
    const words = ["alpha", "beta", "error: bad thing", "warning: careful", "gamma delta", "x".repeat(300), "FAIL one"];
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let round = 0; round < 20; round++) {
      const raw = Array.from({ length: 200 + Math.floor(rand() * 3000) }, () => words[Math.floor(rand() * words.length)]! + (rand() < 0.5 ? ` ${Math.floor(rand() * 1000)}` : "")).join("\n") + (rand() < 0.5 ? "\n" : "");
      const { out } = shape(raw, "", { budget: 1000 + Math.floor(rand() * 6000) });
      for (const m of markersOf(out.text)) expect(m.total).toBe(encoder.encode(raw).byteLength);
      await accountsForAll(out.text, encoder.encode(raw));
    }
  });

  test("a 300 KB line between short lines fills what the budget leaves with its head and tail, one marker between", async () => {
    const line = "<".repeat(100) + "m".repeat(299_800) + ">".repeat(100);
    const raw = `before\n${line}\nafter\n`;
    const { out } = shape(raw);
    const [before, first, marker, last, after] = out.text.split("\n");
    expect([before, after]).toEqual(["before", "after"]);
    expect(first!.length).toBe(last!.length);
    expect(first!.length).toBeGreaterThan(3500);
    expect(line.startsWith(first!)).toBe(true);
    expect(line.endsWith(last!)).toBe(true);
    expect(marker).toBe(`[… part of 1 line truncated (bytes ${7 + first!.length}-${7 + line.length - last!.length} of ${raw.length} total) …]`);
    expect(shownBytes(out.text)).toBeLessThanOrEqual(8000);
    await accountsForAll(out.text, encoder.encode(raw));
  });

  test("a 99,781-byte one-line JSON document shows ~8,000 bytes: its head and tail up to the budget, one marker between", async () => {
    let json = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ["a", "b"] })));
    json = json.slice(0, -1) + " ".repeat(99_781 - json.length) + "]";
    expect(json.length).toBe(99_781);
    const { out } = shape(json);
    const [first, marker, last] = out.text.split("\n");
    expect(out.text.split("\n")).toHaveLength(3);
    expect(json.startsWith(first!) && json.endsWith(last!)).toBe(true);
    expect(marker).toMatch(/^\[… part of 1 line truncated/);
    expect(shownBytes(out.text)).toBeGreaterThan(7800);
    expect(shownBytes(out.text)).toBeLessThanOrEqual(8000);
    await accountsForAll(out.text, encoder.encode(json));
  });

  test("a budget of 1,000 still shows the start and end of a 20 MB line", async () => {
    const raw = "{" + "x".repeat(20_000_000) + "}\n";
    const { out } = shape(raw, "", { budget: 1000 });
    const [first, marker, last] = out.text.split("\n");
    expect(first!.startsWith("{x")).toBe(true);
    expect(last!.endsWith("x}")).toBe(true);
    expect(first!.length).toBeGreaterThan(250);
    expect(marker).toMatch(/^\[… part of 1 line truncated/);
    expect(shownBytes(out.text)).toBeLessThanOrEqual(1000);
    await accountsForAll(out.text, encoder.encode(raw));
  });

  test("a 3 MB line, longer than both windows, shows its head and tail up to the budget, cut between characters", async () => {
    for (const end of ["\n", ""]) {
      const raw = "[" + "é".repeat(1_500_000) + "]" + end;
      const { out } = shape(raw);
      const [first, marker, last] = out.text.split("\n");
      expect(Buffer.byteLength(first!) % 2).toBe(1); // "[" and whole 'é's: a cut never splits one
      expect(Buffer.byteLength(first!)).toBeGreaterThan(3500);
      expect(first!.startsWith("[é")).toBe(true);
      expect(marker).toMatch(new RegExp(`^\\[… part of 1 line truncated \\(bytes ${Buffer.byteLength(first!)}-\\d+ of 300000[23] total\\) …\\]$`));
      expect(last!.endsWith("é]")).toBe(true);
      expect(shownBytes(out.text)).toBeLessThanOrEqual(8000);
      await accountsForAll(out.text, encoder.encode(raw));
    }
  });

  test("5,000 lines of multi-byte text stay valid UTF-8, and cuts fall between characters", async () => {
    const raw = Array.from({ length: 5000 }, (_, i) => `строка ${i}: 日本語のテキスト ${"é".repeat(i % 37)} 🎉`).join("\n") + "\n" + "ж".repeat(5000) + "\n";
    const { out } = shape(raw);
    expect(out.text).not.toContain("\uFFFD");
    const bytes = encoder.encode(raw);
    for (const m of markersOf(out.text)) for (const at of [m.start, m.end]) expect(at === bytes.byteLength || (bytes[at]! & 0xc0) !== 0x80).toBe(true);
    await accountsForAll(out.text, bytes);
  });

  test("a 200 MB flood is shaped from its two ends and one fast pass over the middle", () => {
    // A virtual stream of 10,000,000 lines of 20 bytes, one error line in the middle.
    const line = encoder.encode("progress tick .....\n");
    const error = encoder.encode("fatal: disk I/O err\n");
    const errorAt = 5_000_000 * 20;
    const total = 10_000_000 * 20;
    const pattern = new Uint8Array((1 << 20) + 40);
    for (let i = 0; i < pattern.length; i += 20) pattern.set(line.subarray(0, Math.min(20, pattern.length - i)), i);
    const flood: ByteSource = {
      total,
      read(a, b) {
        const out = new Uint8Array(b - a);
        for (let at = a; at < b; ) {
          const n = Math.min(b - at, 1 << 20);
          out.set(pattern.subarray(at % 20, (at % 20) + n), at - a);
          at += n;
        }
        for (let k = Math.max(a, errorAt); k < Math.min(b, errorAt + 20); k++) out[k - a] = error[k - errorAt]!;
        return out;
      },
    };
    const [out] = shapeOutput([{ source: flood, start: 0, end: total }], { budget: 8000 }); // its time: bench/guards.ts
    expect(out!.text).toContain("fatal: disk I/O err\n");
    expect(out!.text.length).toBeLessThan(10_000);
    const markers = markersOf(out!.text);
    expect(markers[markers.length - 1]!.total).toBe(total);
  }, 60_000);
});

describe("plain head and tail (output: raw)", () => {
  test("keeps escapes and carriage returns, and one marker between head and tail", async () => {
    const raw = Array.from({ length: 2000 }, (_, i) => `\x1b[33mstep ${i}\x1b[0m\r`).join("\n");
    const { out } = shape(raw, "", { raw: true, budget: 2000 });
    expect(out.text.startsWith("\x1b[33mstep 0\x1b[0m\r\n")).toBe(true);
    expect(markersOf(out.text).length).toBe(1);
    expect(shownBytes(out.text)).toBeLessThanOrEqual(2000);
    await accountsForAll(out.text, encoder.encode(raw));
  });

  test("fitting output is byte for byte, terminal control included", () => {
    expect(shape("\x1b[1mbold\x1b[0m\r\n", "", { raw: true }).out.text).toBe("\x1b[1mbold\x1b[0m\r\n");
  });
});

describe("tiny budgets", () => {
  test("a budget of 1 or 2 bytes still accounts for every byte, shaped or plain", async () => {
    const raw = Array.from({ length: 500 }, (_, i) => `line ${i} ${"z".repeat(i % 13)}`).join("\n") + "\n";
    for (const budget of [1, 2, 50]) {
      for (const plain of [false, true]) {
        const { out, err } = shape(raw, raw, { budget, raw: plain });
        expect(shownBytes(out.text) + shownBytes(err.text)).toBeLessThanOrEqual(Math.max(budget, 0));
        await accountsForAll(out.text, encoder.encode(raw));
        await accountsForAll(err.text, encoder.encode(raw));
      }
    }
  });
});

describe("recorded outputs", () => {
  test("bun test, 400 passing and 2 failing: both failing names, expected/received values and the summary within 2,000 bytes", () => {
    const { out } = shape(fixture("bun-test-400-pass-2-fail.txt"), "", { budget: 2000 });
    for (const needle of ["(fail) math > broken sum", "(fail) math > broken greeting", "Expected: 5", "Received: 4", 'Expected: "hello there"', 'Received: "hello world"', " 400 pass", " 2 fail"]) {
      expect(out.text).toContain(needle);
    }
    expect(shownBytes(out.text)).toBeLessThanOrEqual(2000);
  });

  test("Vitest in colour: no escape left, both failures kept", () => {
    const { out } = shape(fixture("vitest-colour-2-fail.txt"), "", { budget: 4000 });
    expect(out.text).not.toContain("\x1b");
    for (const needle of ["FAIL  math.test.js > math > broken sum", "FAIL  math.test.js > math > broken greeting", "Tests  2 failed | 650 passed (652)"]) expect(out.text).toContain(needle);
  });

  test("a Python traceback amid logging keeps both tracebacks and the final exception", () => {
    const { out } = shape(fixture("python-traceback-in-logging.txt"));
    expect(out.text).toContain("ERROR worker: batch 1500 failed\nTraceback (most recent call last):");
    expect(out.text).toContain("KeyError: 'missing'");
    expect(out.text).toContain("ValueError: invalid literal for int() with base 10: 'not a number'");
    expect(shownBytes(out.text)).toBeLessThanOrEqual(8000);
  });

  test("a make/gcc run with an error keeps the error, its warnings and make's summary", () => {
    const { out } = shape(fixture("make-gcc-errors.txt"), fixture("npm-missing-script.stderr.txt"), { budget: 1500 });
    for (const needle of ["bad.c:5:10: error: ‘y’ undeclared", "make: *** [Makefile:4: bad.o] Error 1"]) expect(out.text).toContain(needle);
  });
});
