/** OutputBuffer (pure logic): head and tail kept exactly, whatever the chunk sizes. */
import { expect, test } from "bun:test";
import { OutputBuffer } from "../../src/background/output/buffer.ts";

/** A deterministic byte stream: byte i is i mod 251 (a prime, so no chunk boundary lines up). */
const byteAt = (i: number) => i % 251;
function chunk(from: number, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, k) => byteAt(from + k));
}
function expected(from: number, to: number): Uint8Array {
  return chunk(from, to - from);
}

test("every read of what memory holds matches the stream, across ring growth and wrap-around", () => {
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (const limit of [2, 1000, 4097, 65_536]) {
    const buf = new OutputBuffer(limit);
    const head = Math.floor(limit / 2);
    const tail = limit - head;
    let total = 0;
    for (let i = 0; i < 300; i++) {
      const n = [0, 1, rand(50), rand(5000), rand(3 * tail + 1)][rand(5)]!;
      buf.append(chunk(total, n));
      total += n;
      expect(buf.total).toBe(total);
      const tailStart = Math.max(Math.min(head, total), total - tail);
      expect(buf.tailStart).toBe(tailStart);
      expect(buf.read(tailStart, total)).toEqual(expected(tailStart, total));
      expect(buf.read(0, Math.min(head, total))).toEqual(expected(0, Math.min(head, total)));
      if (total > tailStart) {
        const a = tailStart + rand(total - tailStart);
        const b = a + rand(total - a + 1);
        expect(buf.read(a, b)).toEqual(expected(a, b));
      }
      if (tailStart > head) expect(buf.read(head - 1 < 0 ? 0 : head - 1, tailStart + 1)).toBeNull();
    }
  }
});

test("a chunk larger than the tail keeps only its last bytes", () => {
  const buf = new OutputBuffer(10); // head 5, tail 5
  buf.append(chunk(0, 100));
  expect(buf.read(0, 5)).toEqual(expected(0, 5));
  expect(buf.read(95, 100)).toEqual(expected(95, 100));
  expect(buf.complete).toBe(false);
});
