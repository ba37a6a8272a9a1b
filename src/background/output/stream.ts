import { statSync } from "node:fs";
import { OutputBuffer } from "./buffer.ts";
import { Spool } from "./spool.ts";
import type { StateBudget } from "./state-budget.ts";
import { allZero, ZeroRuns } from "./zeros.ts";

export type StreamName = "stdout" | "stderr";

/**
 * One output stream of a task: bounded memory copy, spool file, read cursor, and
 * listeners told about each chunk (waiters, watches, progress, terminal rendering).
 */
export class OutputStream {
  readonly buffer: OutputBuffer;
  spool: Spool | null;
  /** Read cursor: output before it has been returned by a cursor-moving read. */
  cursor = 0;
  private listeners = new Set<(chunk: Uint8Array) => void>();
  /** Chunks that arrived as zeros only. */
  private readonly zeros = new ZeroRuns();

  constructor(
    readonly name: StreamName,
    memoryLimit: number,
    spool: { path: string; maxBytes: number; startAfter: number; budget?: StateBudget } | null,
  ) {
    this.buffer = new OutputBuffer(memoryLimit);
    this.spool = spool ? new Spool(spool.path, spool.maxBytes, spool.startAfter, spool.budget) : null;
  }

  /** A stream whose output is the log file an earlier registry wrote. */
  static fromLogFile(name: StreamName, memoryLimit: number, path: string, maxBytes: number, budget?: StateBudget): OutputStream {
    const stream = new OutputStream(name, memoryLimit, null);
    let size = 0;
    try {
      size = statSync(path).size;
    } catch {
      return stream;
    }
    const spool = Spool.existing(path, size, maxBytes, budget);
    const half = Math.floor(memoryLimit / 2);
    const headEnd = Math.min(size, half);
    const tailStart = Math.max(headEnd, size - (memoryLimit - half));
    const head = spool.read(0, headEnd);
    const tail = spool.read(tailStart, size);
    if (head && tail) {
      stream.buffer.append(head);
      stream.buffer.skip(tailStart - headEnd);
      stream.buffer.append(tail);
    }
    stream.spool = spool;
    stream.cursor = size;
    return stream;
  }

  get total(): number {
    return this.buffer.total;
  }

  append(chunk: Uint8Array): void {
    const before = this.buffer.total;
    this.buffer.append(chunk);
    const zero = allZero(chunk);
    if (zero) this.zeros.add(before, this.buffer.total);
    this.spool?.append(chunk, this.buffer.total, () => this.buffer.read(0, before), zero);
    for (const l of this.listeners) l(chunk);
  }

  /** Where the run of zeros holding `pos` ends (`pos` if none is known): see ByteSource.zeroRunEnd. */
  zeroRunEnd(pos: number): number {
    return this.zeros.endAt(pos);
  }

  /** Makes the log file hold the whole stream, also when it was short enough to live in memory only. */
  spoolAll(): void {
    const all = this.spool && !this.spool.exists && this.spool.error === null ? this.buffer.read(0, this.total) : null;
    if (all) this.spool!.fill(all);
  }

  onData(listener: (chunk: Uint8Array) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Bytes [start, end) from memory or, failing that, the spool; null if neither has them. */
  read(start: number, end: number): Uint8Array | null {
    return this.buffer.read(start, end) ?? this.spool?.read(start, end) ?? null;
  }

  /** Like read(), into `into` (see ByteSource.readInto): what memory no longer holds comes from the spool without a copy in between. */
  readInto(start: number, into: Uint8Array): number | null {
    const end = Math.min(this.total, start + into.byteLength);
    const spooled = this.spool?.readInto(start, into.subarray(0, Math.max(0, end - start)));
    if (spooled !== undefined && spooled !== null) return spooled;
    const bytes = this.buffer.read(start, end);
    if (!bytes) return null;
    into.set(bytes);
    return bytes.byteLength;
  }

  /** Path of the spool file once it exists (a background task's from launch, empty or not). */
  get path(): string | undefined {
    return this.spool?.exists ? this.spool.path : undefined;
  }
}
