/**
 * A background task's log file is made off the event loop while its process starts
 * (Spool.open): output that comes meanwhile is kept in order, and never more than a bounded
 * amount of it — past that the file is made at once on the event loop.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Spool } from "../src/background/output/spool.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "as-spool-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const openFds = () => readdirSync("/proc/self/fd").length;
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

test("output appended while the file is being made reaches it whole and in order", async () => {
  const spool = new Spool(join(dir, "tasks", "bg-1", "stdout.log"), 1 << 30, 0);
  const opened = spool.open();
  let total = 0;
  for (const fill of [1, 2, 3]) spool.append(bytes(1000, fill), (total += 1000), () => null);
  await opened;
  expect(spool.exists).toBe(true);
  spool.append(bytes(1000, 4), (total += 1000), () => null);
  spool.close();
  const file = readFileSync(spool.path);
  expect(file.length).toBe(4000);
  expect([file[0], file[1000], file[2000], file[3999]]).toEqual([1, 2, 3, 4]);
});

test("a flood while the file is being made: made at once past 256 KiB, nothing lost, one descriptor left", async () => {
  const before = openFds();
  const spool = new Spool(join(dir, "tasks", "bg-2", "stdout.log"), 1 << 30, 0);
  const opened = spool.open();
  let total = 0;
  for (let i = 0; i < 40; i++) spool.append(bytes(16 * 1024, i), (total += 16 * 1024), () => null);
  // Past the bound the file exists already, before the file system pool has answered.
  expect(existsSync(spool.path)).toBe(true);
  await opened;
  expect(openFds()).toBe(before + 1); // the pool's descriptor was closed, the spool's kept
  spool.close();
  expect(openFds()).toBe(before);
  const file = readFileSync(spool.path);
  expect(file.length).toBe(total);
  for (let i = 0; i < 40; i++) expect(file[i * 16 * 1024]).toBe(i);
});

test("closed before the file exists: written and closed once it does", async () => {
  const before = openFds();
  const spool = new Spool(join(dir, "tasks", "bg-3", "stderr.log"), 1 << 30, 0);
  const opened = spool.open();
  spool.append(bytes(10, 7), 10, () => null);
  spool.close();
  await opened;
  expect(readFileSync(spool.path)).toEqual(Buffer.from(bytes(10, 7)));
  expect(openFds()).toBe(before);
});
