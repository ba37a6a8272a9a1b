import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { makePrivateDir, makePrivateDirAsync, openPrivateAppend, openPrivateAppendAsync } from "../state/private-files.ts";
import { dirname } from "node:path";

/**
 * Append-only log file holding a stream's complete output. It never stops or blocks the
 * task: hitting the size cap or a disk error only stops spooling and records why.
 * Spooling can start late (`startAfter` bytes) so that short foreground output never
 * touches the disk; the bytes before that point come from the in-memory buffer.
 */
/** Output held in memory at most while a log file is being made off the event loop. */
const MAX_QUEUED = 256 * 1024;

export class Spool {
  private fd: number | null = null;
  /** Bytes written to the file. */
  written = 0;
  error: string | null = null;
  private started = false;
  /** The log file was created (it may still be empty). */
  private created = false;
  /** While the file is being created off the event loop (open()): output waits here, in order. */
  private opening: Promise<void> | null = null;
  private queued: Uint8Array[] = [];
  private queuedBytes = 0;
  private closeWhenOpen = false;

  constructor(
    readonly path: string,
    private readonly maxBytes: number,
    private readonly startAfter: number,
  ) {}

  /** A spool over a log file written by an earlier registry: readable, not appended to. */
  static existing(path: string, size: number, maxBytes: number): Spool {
    const spool = new Spool(path, maxBytes, 0);
    spool.started = true;
    spool.created = true;
    spool.written = size;
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

  /**
   * Create the file now (background tasks: their log files exist from launch), off the
   * event loop: a hundred tasks started at once would otherwise wait in turn on the file
   * system (0.3–2 ms a task on ext4). Output that comes meanwhile is written once it exists.
   */
  open(): Promise<void> {
    if (this.started || this.startAfter !== 0) return Promise.resolve();
    this.started = true;
    let opening: Promise<void> | undefined = undefined; // set before the first await returns
    opening = (async () => {
      let fd: number | null = null;
      let problem: string | null = null;
      try {
        await makePrivateDirAsync(dirname(this.path));
        fd = await openPrivateAppendAsync(this.path);
      } catch (e) {
        problem = (e as Error).message;
      }
      if (this.opening !== opening) {
        // Made meanwhile on the event loop (createNow): this descriptor is a second one.
        if (fd !== null) closeSync(fd);
        return;
      }
      this.opening = null;
      if (problem !== null) this.fail(`cannot create spool file ${this.path}: ${problem}`);
      else {
        this.fd = fd;
        this.created = true;
      }
      this.writeQueued();
    })();
    this.opening = opening;
    return opening;
  }

  /**
   * The file system is slow and output keeps coming: make the file now, on the event loop,
   * rather than hold more than MAX_QUEUED bytes of it in memory.
   */
  private createNow(): void {
    this.opening = null;
    this.createFile();
    this.writeQueued();
  }

  private writeQueued(): void {
    const queued = this.queued;
    this.queued = [];
    this.queuedBytes = 0;
    for (const bytes of queued) this.write(bytes);
    if (this.closeWhenOpen) this.close();
  }

  /** Resolves once the file exists and holds the output so far (or could not be made). */
  get settled(): Promise<void> {
    return this.opening ?? Promise.resolve();
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
  append(chunk: Uint8Array, total: number, earlier: () => Uint8Array | null): void {
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
    this.write(chunk);
  }

  private write(bytes: Uint8Array): void {
    if (this.opening) {
      this.queued.push(bytes.slice()); // stream chunks may be reused
      this.queuedBytes += bytes.byteLength;
      if (this.queuedBytes > MAX_QUEUED) this.createNow();
      return;
    }
    if (this.fd === null || this.error !== null || bytes.byteLength === 0) return;
    let data = bytes;
    if (this.written + data.byteLength > this.maxBytes) {
      data = data.subarray(0, this.maxBytes - this.written);
    }
    try {
      let off = 0;
      while (off < data.byteLength) off += writeSync(this.fd, data, off, data.byteLength - off);
      this.written += data.byteLength;
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      this.fail(
        err.code === "ENOSPC"
          ? `spooling stopped at ${this.written} bytes: no space left on device (${this.path})`
          : `spooling stopped at ${this.written} bytes: ${err.message}`,
      );
      return;
    }
    if (data.byteLength < bytes.byteLength) {
      this.fail(`spooling stopped at ${this.written} bytes: max_log_bytes (${this.maxBytes}) reached`);
    }
  }

  private fail(message: string): void {
    this.error = message;
    this.close();
  }

  /** Bytes [start, end) from the file, or null when the file does not hold them. */
  read(start: number, end: number): Uint8Array | null {
    if (!this.started || end > this.written) return null;
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch {
      return null;
    }
    try {
      const out = new Uint8Array(end - start);
      let got = 0;
      while (got < out.byteLength) {
        const n = readSync(fd, out, got, out.byteLength - got, start + got);
        if (n === 0) break;
        got += n;
      }
      return got === out.byteLength ? out : null;
    } finally {
      closeSync(fd);
    }
  }

  /** Appends again after close() (a task restarted in place writes on into the same file). */
  reopen(): void {
    if (this.opening) {
      this.closeWhenOpen = false;
      return;
    }
    if (this.fd !== null || this.error !== null || !this.started) return;
    try {
      this.fd = openSync(this.path, "a", 0o600);
    } catch (e) {
      this.fail(`cannot reopen spool file ${this.path}: ${(e as Error).message}`);
    }
  }

  close(): void {
    if (this.opening) {
      this.closeWhenOpen = true;
      return;
    }
    this.closeWhenOpen = false;
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {}
    this.fd = null;
  }
}
