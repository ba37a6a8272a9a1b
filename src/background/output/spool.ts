import { closeSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { makePrivateDir, openPrivateAppend } from "../state/private-files.ts";
import { dirname } from "node:path";
import type { StateBudget } from "./state-budget.ts";
import { allZero } from "./zeros.ts";

/** How soon the zeros of a run are in the file's size for other readers (write()). */
const HOLE_MS = 5;

/**
 * Append-only log file holding a stream's complete output. It never stops or blocks the
 * task: hitting its size cap, the cap of all logs together (`budget`) or a disk error only
 * stops spooling and records why.
 * Spooling can start late (`startAfter` bytes) so that short foreground output never
 * touches the disk; the bytes before that point come from the in-memory buffer.
 */
export class Spool {
  private fd: number | null = null;
  /** Bytes written to the file (the zeros of a hole not yet made included). */
  written = 0;
  /** The file's size: `written` less the zeros of a hole not yet made (see write()). */
  private sized = 0;
  private holeTimer: ReturnType<typeof setTimeout> | null = null;
  error: string | null = null;
  private started = false;
  /** The log file was created (it may still be empty). */
  private created = false;
  /** The stream has ended (until a restart in place reopens it): no fd stays open. */
  private ended = false;

  constructor(
    readonly path: string,
    private readonly maxBytes: number,
    private readonly startAfter: number,
    private readonly budget?: StateBudget,
  ) {}

  /** A spool over a log file written by an earlier registry: readable, not appended to. */
  static existing(path: string, size: number, maxBytes: number, budget?: StateBudget): Spool {
    budget?.add(size);
    const spool = new Spool(path, maxBytes, 0, budget);
    spool.started = true;
    spool.created = true;
    spool.written = size;
    spool.sized = size;
    return spool;
  }

  /** Whether the file exists and holds output (possibly cut short by `error`). */
  get active(): boolean {
    return this.started && this.written > 0;
  }

  /** Whether the log file exists, empty or not (background tasks: from launch). */
  get exists(): boolean {
    return this.created;
  }

  /** Whether every byte of the stream so far is in the file. */
  get complete(): boolean {
    return this.started && this.error === null;
  }

  /** Create the file now (background tasks), so the first output does not pay for it. */
  open(): void {
    if (!this.started && this.startAfter === 0 && this.createFile() && this.ended) this.close();
  }

  private createFile(): boolean {
    this.started = true;
    try {
      makePrivateDir(dirname(this.path));
      this.fd = openPrivateAppend(this.path);
      this.created = true;
      return true;
    } catch (e) {
      this.fail(`cannot create spool file ${this.path}: ${(e as Error).message}`);
      return false;
    }
  }

  /**
   * Called after `total` bytes (this chunk included) have been produced. `earlier` gives
   * the bytes produced before this chunk when spooling starts late.
   */
  append(chunk: Uint8Array, total: number, earlier: () => Uint8Array | null, zero?: boolean): void {
    if (this.error !== null) return;
    if (!this.started) {
      if (total <= this.startAfter) return;
      if (!this.createFile()) return;
      const before = total - chunk.byteLength > 0 ? earlier() : new Uint8Array(0);
      if (before === null) {
        this.fail("output before spooling started is no longer in memory");
        return;
      }
      this.write(before);
    }
    this.write(chunk, zero);
  }

  /**
   * Writes a whole stream at once when spooling never started (foreground output short
   * enough to live in memory only, which a result then left partly out).
   */
  fill(bytes: Uint8Array): void {
    if (this.started || !this.createFile()) return;
    this.write(bytes);
    this.close();
  }

  /** `zero`: the caller knows whether `bytes` are all zeros (else they are checked here). */
  private write(bytes: Uint8Array, zero?: boolean): void {
    if (this.fd === null || this.error !== null || bytes.byteLength === 0) return;
    const capped = Math.min(bytes.byteLength, this.maxBytes - this.written);
    const granted = this.budget ? this.budget.grant(capped) : capped;
    const data = granted < bytes.byteLength ? bytes.subarray(0, granted) : bytes;
    try {
      // A run of zeros becomes a hole: the file grows without a byte written (it reads back
      // as the same zeros), and a flood of them costs no page of the page cache. The file is
      // extended before the next write, a read, the close, or within HOLE_MS (one ftruncate
      // for a run, not one per chunk).
      if (data === bytes ? (zero ?? allZero(data)) : allZero(data)) {
        this.written += data.byteLength;
        this.holeTimer ??= setTimeout(() => this.makeHoleOrFail(), HOLE_MS);
        this.holeTimer.unref?.();
      } else {
        this.makeHole();
        let off = 0;
        while (off < data.byteLength) off += writeSync(this.fd, data, off, data.byteLength - off);
        this.written += data.byteLength;
        this.sized = this.written;
      }
    } catch (e) {
      this.budget?.release(granted);
      const err = e as NodeJS.ErrnoException;
      this.fail(
        err.code === "ENOSPC"
          ? `spooling stopped at ${this.written} bytes: no space left on device (${this.path})`
          : `spooling stopped at ${this.written} bytes: ${err.message}`,
      );
      return;
    }
    if (granted < capped) {
      this.fail(`spooling stopped at ${this.written} bytes: max_state_bytes (${this.budget!.maxBytes}) reached by agent-shell's task logs together (the oldest finished tasks' logs went first); the task keeps running`);
    } else if (capped < bytes.byteLength) {
      this.fail(`spooling stopped at ${this.written} bytes: max_log_bytes (${this.maxBytes}) reached`);
    }
  }

  /** Extends the file over the zeros not yet in it. */
  private makeHole(): void {
    if (this.holeTimer) clearTimeout(this.holeTimer);
    this.holeTimer = null;
    if (this.fd === null || this.sized >= this.written) return;
    ftruncateSync(this.fd, this.written);
    this.sized = this.written;
  }

  private makeHoleOrFail(): void {
    try {
      this.makeHole();
    } catch (e) {
      this.budget?.release(this.written - this.sized);
      this.written = this.sized;
      this.fail(`spooling stopped at ${this.sized} bytes: ${(e as Error).message}`);
    }
  }

  private fail(message: string): void {
    this.error = message;
    this.close();
  }

  /** Bytes [start, end) from the file, or null when the file does not hold them. */
  read(start: number, end: number): Uint8Array | null {
    if (!this.started || end > this.written) return null;
    const out = new Uint8Array(end - start);
    return this.readInto(start, out) === out.byteLength ? out : null;
  }

  /** Bytes from `start` filling `into`, or null when the file does not hold them all. */
  readInto(start: number, into: Uint8Array): number | null {
    if (!this.started || start + into.byteLength > this.written) return null;
    if (start + into.byteLength > this.sized) {
      try {
        this.makeHole();
      } catch {
        return null;
      }
    }
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch {
      return null;
    }
    try {
      let got = 0;
      while (got < into.byteLength) {
        const n = readSync(fd, into, got, into.byteLength - got, start + got);
        if (n === 0) break;
        got += n;
      }
      return got === into.byteLength ? got : null;
    } finally {
      closeSync(fd);
    }
  }

  /** Appends again after close() (a task restarted in place writes on into the same file). */
  reopen(): void {
    this.ended = false;
    if (this.fd !== null || this.error !== null || !this.started) return;
    try {
      this.fd = openSync(this.path, "a", 0o600);
    } catch (e) {
      this.fail(`cannot reopen spool file ${this.path}: ${(e as Error).message}`);
    }
  }

  /**
   * Removes the log file (the link itself, never what a link points to) and gives its bytes
   * back to the budget; what memory holds stays readable, and `error` says `why` the rest is
   * gone. Returns the bytes freed.
   */
  discard(why?: string): number {
    this.close();
    const freed = this.written;
    if (this.created) {
      try {
        unlinkSync(this.path);
      } catch {
        /* already gone */
      }
    }
    this.budget?.release(freed);
    this.written = this.sized = 0;
    this.created = false;
    if (why && freed > 0) this.error = why;
    return freed;
  }

  /** The stream has ended: the file is closed, and one made later (open) is closed at once. */
  end(): void {
    this.ended = true;
    this.close();
  }

  close(): void {
    if (this.fd === null) return;
    try {
      this.makeHole();
    } catch (e) {
      this.error ??= `spooling stopped at ${this.sized} bytes: ${(e as Error).message}`;
      this.budget?.release(this.written - this.sized);
      this.written = this.sized;
    }
    try {
      closeSync(this.fd);
    } catch {}
    this.fd = null;
  }
}
