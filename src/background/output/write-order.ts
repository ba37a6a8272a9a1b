import { closeSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { makePrivateDir, openPrivateAppend } from "../state/private-files.ts";
import type { OutputStream } from "./stream.ts";

/**
 * The order in which a task wrote its stdout and stderr, so `logs` can merge them as
 * written: `<task dir>/order.idx`, one fixed 24-byte record per chunk — stream (byte 0:
 * 0 stdout, 1 stderr), the stream's byte count after the chunk (float64 at 8) and the
 * time in ms since the epoch (float64 at 16). A record follows its chunk's spool write,
 * so whatever the index names is already in the log file. One small write per chunk.
 */
export const WRITE_ORDER_FILE = "order.idx";
export const RECORD_BYTES = 24;

export function recordWriteOrder(path: string, stdout: OutputStream, stderr: OutputStream): { close(): void } {
  let fd: number | null = null;
  let failed = false;
  const record = new Uint8Array(RECORD_BYTES);
  const view = new DataView(record.buffer);
  const append = (which: number, total: number) => {
    if (failed) return;
    try {
      if (fd === null) {
        // Like the spools: a private file, never through a link planted in the state dir.
        makePrivateDir(dirname(path));
        fd = openPrivateAppend(path);
      }
      record[0] = which;
      view.setFloat64(8, total, true);
      view.setFloat64(16, Date.now(), true);
      writeSync(fd, record);
    } catch {
      failed = true; // the logs stay readable per stream; only the merged view is lost
    }
  };
  stdout.onData(() => append(0, stdout.total));
  stderr.onData(() => append(1, stderr.total));
  return {
    /** Releases the file between runs; the next write opens it again. */
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
