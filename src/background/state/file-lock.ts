import { dlopen, FFIType } from "bun:ffi";
import { closeSync } from "node:fs";
import { openPrivateAppend } from "./private-files.ts";

/**
 * Advisory whole-file locks (flock). The kernel drops a lock when its holder dies, so a
 * lock that can be taken means its previous owner is gone — however it died.
 */
const LOCK_EX = 2;
const LOCK_NB = 4;

let libc: { symbols: { flock: (fd: number, op: number) => number } } | null = null;

function flock(fd: number, op: number): number {
  libc ??= dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", {
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  }) as never;
  return libc!.symbols.flock(fd, op);
}

export interface FileLock {
  release(): void;
}

/** Takes an exclusive lock on `path` (created if needed) without waiting; null if someone holds it. */
export function tryLock(path: string): FileLock | null {
  const fd = openPrivateAppend(path);
  if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    return null;
  }
  return {
    release() {
      try {
        closeSync(fd);
      } catch {}
    },
  };
}
