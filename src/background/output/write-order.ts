import { closeSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { makePrivateDir, openPrivateAppend } from "../state/private-files.ts";
import type { OutputStream } from "./stream.ts";

/**
 * The order in which a task wrote its stdout and stderr, so `logs` can merge them as
 * written: `<task dir>/order.idx`, one fixed 24-byte record per run of chunks — stream
 * (byte 0: 0 stdout, 1 stderr), the stream's byte count after the run (float64 at 8) and
 * the time of its first chunk in ms since the epoch (float64 at 16). A record follows its
 * chunks' spool writes, so whatever the index names is already in the log file.
 *
 * Chunks of one stream that follow each other within COALESCE_MS share one record (a
 * flood's 3,000 chunks a second were 3,000 small writes): the record is written when the
 * other stream writes, when the window ends, or at close. A record is at most COALESCE_MS
 * late, and a line's time at most that early.
 */
export const WRITE_ORDER_FILE = "order.idx";
export const RECORD_BYTES = 24;
const COALESCE_MS = 5;

export function recordWriteOrder(path: string, stdout: OutputStream, stderr: OutputStream): { close(): void } {
  let fd: number | null = null;
  let failed = false;
  const record = new Uint8Array(RECORD_BYTES);
  const view = new DataView(record.buffer);
  /** The record of the run of chunks not written yet. */
  let pending: { which: number; total: number; at: number } | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let lastWrite = 0;
  const write = (which: number, total: number, at: number) => {
    if (failed) return;
    try {
      if (fd === null) {
        // Like the spools: a private file, never through a link planted in the state dir.
        makePrivateDir(dirname(path));
        fd = openPrivateAppend(path);
      }
      record[0] = which;
      view.setFloat64(8, total, true);
      view.setFloat64(16, at, true);
      writeSync(fd, record);
      lastWrite = Date.now();
    } catch {
      failed = true; // the logs stay readable per stream; only the merged view is lost
    }
  };
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!pending) return;
    write(pending.which, pending.total, pending.at);
    pending = null;
  };
  const append = (which: number, total: number) => {
    const now = Date.now();
    if (pending && pending.which === which) {
      pending.total = total;
      return;
    }
    flush();
    if (now - lastWrite >= COALESCE_MS) return write(which, total, now);
    pending = { which, total, at: now };
    timer = setTimeout(flush, COALESCE_MS);
    timer.unref?.();
  };
  stdout.onData(() => append(0, stdout.total));
  stderr.onData(() => append(1, stderr.total));
  return {
    /** Writes what is pending and releases the file between runs; the next write opens it again. */
    close() {
      flush();
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
