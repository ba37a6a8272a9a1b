/**
 * Passes over a whole flood (its middle's error lines, an omission's line count) read the
 * spool through one reused buffer (ByteSource.readInto): what they return must be exactly
 * what reading fresh buffers returned.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shapeOutput, type ByteSource } from "../../src/background/output/index.ts";
import { OutputStream } from "../../src/background/output/stream.ts";
import { allZero } from "../../src/background/output/zeros.ts";
import { streamItems } from "../../src/background/output/shape/stream-items.ts";

const dir = mkdtempSync(join(tmpdir(), "as-flood-read-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stream keeping 64 KiB in memory and everything in its spool, fed `bytes` in pipe-sized chunks. */
function streamOf(bytes: Uint8Array, name = "s"): OutputStream {
  const stream = new OutputStream("stdout", 64 * 1024, { path: join(dir, `${name}.log`), maxBytes: 1e12, startAfter: 0 });
  stream.spool!.open();
  for (let at = 0; at < bytes.byteLength; at += 65536) stream.append(bytes.subarray(at, Math.min(bytes.byteLength, at + 65536)));
  stream.spool!.close();
  return stream;
}

/** The same stream seen without readInto: every chunk a fresh buffer. */
function withoutReadInto(stream: OutputStream): ByteSource {
  return { total: stream.total, read: (a, b) => stream.read(a, b) };
}

/** ~6 MB of build-like lines, error lines and one long line in the middle. */
function flood(): Uint8Array {
  const lines: string[] = [];
  for (let i = 0; i < 100_000; i++) {
    if (i === 40_000) lines.push("src/app.ts:12:5 - error TS2322: Type 'string' is not assignable to type 'number'.");
    else if (i === 60_000) lines.push(`FAIL tests/long.test.ts ${"x".repeat(5000)} Expected 1, Received 2`);
    else lines.push(`[${i}] compiling module ${i % 977} of the workspace, nothing to report here`);
  }
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

describe("reading a flood through one reused buffer", () => {
  const bytes = flood();
  const stream = streamOf(bytes, "flood");

  test("readInto returns the stream's bytes, from memory, from the spool, and across", () => {
    for (const [a, n] of [
      [0, 1000],
      [3_000_000, 1 << 20],
      [bytes.byteLength - 5000, 5000],
      [bytes.byteLength - 100_000, 100_000],
    ] as const) {
      const into = new Uint8Array(n);
      expect(stream.readInto(a, into)).toBe(n);
      expect(Buffer.from(into).equals(Buffer.from(bytes.subarray(a, a + n)))).toBe(true);
    }
  });

  test("shaped and plain views are the same as with fresh buffers: middle error lines kept whole, omissions counted", () => {
    for (const raw of [false, true]) {
      const reused = shapeOutput([{ source: stream, start: 0, end: stream.total }], { budget: 8000, raw });
      const fresh = shapeOutput([{ source: withoutReadInto(stream), start: 0, end: stream.total }], { budget: 8000, raw });
      expect(reused).toEqual(fresh);
    }
    const shaped = shapeOutput([{ source: stream, start: 0, end: stream.total }], { budget: 8000 })[0]!.text;
    expect(shaped).toContain("error TS2322: Type 'string' is not assignable");
    expect(shaped).toContain("FAIL tests/long.test.ts");
  });

  test("a flood of zeros: no line in its middle, its bytes counted", () => {
    const zeros = streamOf(new Uint8Array(5_000_000), "zeros");
    const [plain] = shapeOutput([{ source: zeros, start: 0, end: zeros.total }], { budget: 1000, raw: true });
    const [fresh] = shapeOutput([{ source: withoutReadInto(zeros), start: 0, end: zeros.total }], { budget: 1000, raw: true });
    expect(plain).toEqual(fresh!);
    expect(plain!.truncated).toBe(true);
  });
});

describe("runs of zeros", () => {
  test("allZero: only NUL bytes, whatever the length", () => {
    expect(allZero(new Uint8Array(200_000))).toBe(true);
    const one = new Uint8Array(200_000);
    one[150_000] = 1;
    expect(allZero(one)).toBe(false);
    expect(allZero(new Uint8Array(0))).toBe(false);
    expect(allZero(new TextEncoder().encode("0000"))).toBe(false);
  });

  test("the spool leaves zeros as holes: the log file reads back every byte, in order, and takes little disk", () => {
    const text = new TextEncoder().encode("before the zeros\n");
    const bytes = new Uint8Array(text.byteLength + 8_000_000 + text.byteLength);
    bytes.set(text, 0);
    bytes.set(text, bytes.byteLength - text.byteLength);
    const stream = streamOf(bytes, "holes");
    const file = readFileSync(stream.spool!.path);
    expect(file.byteLength).toBe(bytes.byteLength);
    expect(file.equals(Buffer.from(bytes))).toBe(true);
    expect(statSync(stream.spool!.path).blocks * 512).toBeLessThan(1_000_000);
    expect(stream.read(1000, 2000)).toEqual(new Uint8Array(1000));
  });

  test("an open spool's file holds a run of zeros once more output follows, or once it is read", () => {
    const stream = new OutputStream("stdout", 64 * 1024, { path: join(dir, "open-holes.log"), maxBytes: 1e12, startAfter: 0 });
    stream.spool!.open();
    try {
      stream.append(new Uint8Array(300_000));
      stream.append(new TextEncoder().encode("after\n"));
      expect(statSync(stream.spool!.path).size).toBe(300_006);
      stream.append(new Uint8Array(200_000));
      const into = new Uint8Array(1000);
      expect(stream.readInto(stream.total - 1000, into)).toBe(1000);
      expect(into).toEqual(new Uint8Array(1000));
      expect(statSync(stream.spool!.path).size).toBe(500_006);
      expect(readFileSync(stream.spool!.path).subarray(300_000, 300_006).toString()).toBe("after\n");
    } finally {
      stream.spool!.close();
    }
  });

  test("zeros known from their arrival are skipped unread, with the same result", () => {
    const text = new TextEncoder().encode("start\nerror: in the middle\n");
    const bytes = new Uint8Array(30_000_000);
    bytes.set(text, 15_000_000 - 4096);
    const stream = streamOf(bytes, "known-zeros");
    let read = 0;
    const counting: ByteSource = {
      total: stream.total,
      read: (a, b) => ((read += b - a), stream.read(a, b)),
      readInto: (a, into) => ((read += into.byteLength), stream.readInto(a, into)),
      zeroRunEnd: (pos) => stream.zeroRunEnd(pos),
    };
    for (const raw of [false, true]) {
      read = 0;
      const skipping = shapeOutput([{ source: counting, start: 0, end: stream.total }], { budget: 1000, raw });
      expect(read).toBeLessThan(bytes.byteLength / 10); // the two ends and the chunks around the text
      const reading = shapeOutput([{ source: withoutReadInto(stream), start: 0, end: stream.total }], { budget: 1000, raw });
      expect(skipping).toEqual(reading);
    }
    expect(shapeOutput([{ source: counting, start: 0, end: stream.total }], { budget: 1000 })[0]!.text).toContain("error: in the middle");
  });

  test("an error line between two floods of zeros is still found and shown", () => {
    const error = new TextEncoder().encode("\nerror: the disk image is corrupt\n");
    const bytes = new Uint8Array(6_000_000 + error.byteLength);
    bytes.set(error, 3_000_000);
    const stream = streamOf(bytes, "zeros-error");
    const [shaped] = shapeOutput([{ source: stream, start: 0, end: stream.total }], { budget: 1000 });
    expect(shaped!.text).toContain("error: the disk image is corrupt");
    expect(shaped!.truncated).toBe(true);
  });
});

describe("counting lines", () => {
  test("newlines counts every \\n in any range, at any alignment, with bytes that look alike around", async () => {
    const { newlines } = await import("../../src/background/output/shape/items.ts");
    const reference = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).reduce((n, x) => n + (x === 10 ? 1 : 0), 0);
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let trial = 0; trial < 5000; trial++) {
      const buffer = new Uint8Array(300);
      for (let i = 0; i < buffer.length; i++) {
        const r = random();
        buffer[i] = r < 0.2 ? 10 : r < 0.3 ? 0 : r < 0.35 ? 0x8a : r < 0.4 ? 0x0b : Math.floor(random() * 256);
      }
      const bytes = buffer.subarray(Math.floor(random() * 8));
      const from = Math.floor(random() * bytes.length);
      const to = from + Math.floor(random() * (bytes.length - from + 1));
      expect(newlines(bytes, from, to)).toBe(reference(bytes, from, to));
    }
  });
});

describe("the write-order index", () => {
  test("chunks of one stream in quick succession share a record; a switch of stream keeps the order as written", async () => {
    const { recordWriteOrder, RECORD_BYTES, WRITE_ORDER_FILE } = await import("../../src/background/output/write-order.ts");
    const { MergedLog } = await import("../../src/cli/merged-log.ts");
    const taskDir = mkdtempSync(join(dir, "task-"));
    const make = (name: "stdout" | "stderr") => {
      const s = new OutputStream(name, 1 << 20, { path: join(taskDir, `${name}.log`), maxBytes: 1e12, startAfter: 0 });
      s.spool!.open();
      return s;
    };
    const out = make("stdout");
    const err = make("stderr");
    const order = recordWriteOrder(join(taskDir, WRITE_ORDER_FILE), out, err);
    const enc = new TextEncoder();
    for (let i = 0; i < 1000; i++) out.append(enc.encode(`flood ${i}\n`));
    err.append(enc.encode("err 1\n"));
    out.append(enc.encode("out 2\n"));
    err.append(enc.encode("err 2\n"));
    order.close();
    out.spool!.close();
    err.spool!.close();
    const records = statSync(join(taskDir, WRITE_ORDER_FILE)).size / RECORD_BYTES;
    expect(records).toBeLessThan(20);
    const merged = MergedLog.open(out.spool!.path)!;
    const lines = [...merged.read(), ...merged.flush()].map((l) => `${l.stream}:${l.text}`);
    expect(lines.slice(-3)).toEqual(["stderr:err 1\n", "stdout:out 2\n", "stderr:err 2\n"]);
    expect(lines.length).toBe(1003);
  });
});

describe("the error search of a flood's middle", () => {
  test("every word the candidate expression matches contains one of the anchors that let a chunk be skipped", async () => {
    const { CANDIDATE, CANDIDATE_ANCHORS } = await import("../../src/background/output/shape/stream-items.ts");
    // Expand each alternative's [Xx] classes into the words it matches.
    const words = CANDIDATE.source.split("|").flatMap((alt: string) => {
      let out = [""];
      for (const part of alt.match(/\[[^\]]+\]|[^[]/g)!) {
        const options = part.startsWith("[") ? part.slice(1, -1).split("") : [part];
        out = out.flatMap((w) => options.map((o) => w + o));
      }
      return out;
    });
    expect(words.length).toBeGreaterThan(15);
    for (const word of words) expect(CANDIDATE_ANCHORS.some((a: string) => word.includes(a))).toBe(true);
  });

  test("a flood of one-byte lines: at most a budget's lines are made at each end, and every line is still shown or counted", () => {
    const lines = 300_000;
    const bytes = new TextEncoder().encode("y\n".repeat(lines / 2) + "error: disk full\n" + "y\n".repeat(lines / 2 - 1));
    const stream = streamOf(bytes, "tiny-lines");
    const budget = 2000;
    const items = streamItems(stream, 0, stream.total, 256 * 1024, budget);
    expect(items.filter((it) => it.kind === "line").length).toBeLessThanOrEqual(2 * budget + 5);
    expect(items.reduce((n, it) => n + (it.kind === "line" ? 1 : (it.lines ?? NaN)), 0)).toBe(lines);
    const [shaped] = shapeOutput([{ source: stream, start: 0, end: stream.total }], { budget });
    expect(shaped!.text).toContain("error: disk full");
    const text = shaped!.text.split("\n").filter((l) => l !== "");
    const counted = text.reduce((n, l) => {
      const m = /^\[… (\d+) (?:similar )?lines? truncated/.exec(l);
      return n + (m ? Number(m[1]) : 1);
    }, 0);
    expect(counted).toBe(lines);
  });

  test("one short line left between the capped ends is counted, not taken for a line longer than both windows", () => {
    const lines = 2 * 1000 + 1;
    const bytes = new TextEncoder().encode(Array.from({ length: lines }, (_, i) => `line ${i}`).join("\n") + "\n");
    const source: ByteSource = { total: bytes.byteLength, read: (a, b) => bytes.slice(a, b) };
    const items = streamItems(source, 0, bytes.byteLength, 256 * 1024, 1000);
    expect(items.some((it) => it.kind === "line" && it.ends !== undefined)).toBe(false);
    expect(items.reduce((n, it) => n + (it.kind === "line" ? 1 : (it.lines ?? NaN)), 0)).toBe(lines);
  });

  test("a flood of plain lines with one error line in its middle: the error line is shown", () => {
    const enc = new TextEncoder();
    const plain = "agent-shell benchmark: a line of ordinary text output\n".repeat(100_000);
    const bytes = enc.encode(plain + "fatal: the index file is corrupt\n" + plain);
    const stream = streamOf(bytes, "plain-error");
    const [shaped] = shapeOutput([{ source: stream, start: 0, end: stream.total }], { budget: 2000 });
    expect(shaped!.text).toContain("fatal: the index file is corrupt");
  });
});
