/**
 * Passes over a whole flood (its middle's error lines, an omission's line count) read the
 * spool through one reused buffer (ByteSource.readInto): what they return must be exactly
 * what reading fresh buffers returned.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shapeOutput, type ByteSource } from "../src/background/output/index.ts";
import { OutputStream } from "../src/background/output/stream.ts";

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
