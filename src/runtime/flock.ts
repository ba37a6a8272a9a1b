import { dlopen, FFIType } from "bun:ffi";
import { closeSync, openSync, writeFileSync } from "node:fs";

/**
 * An advisory exclusive lock (flock(2)) on a file, held while the process lives: the
 * kernel releases it when the process dies, however it dies, so a stale lock never
 * outlives its owner. Used to decide races between processes (e.g. two daemons starting).
 */
const LOCK_EX = 2;
const LOCK_NB = 4;

let libc: { symbols: { flock: (fd: number, op: number) => number } } | null = null;

function load() {
  libc ??= dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", {
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  }) as never;
  return libc!;
}

export interface HeldLock {
  readonly path: string;
  /** Records who holds the lock (e.g. a pid), for messages and `daemon status`. */
  write(text: string): void;
  release(): void;
}

/** Takes the lock without blocking; null when another process holds it. */
export function tryLock(path: string): HeldLock | null {
  const fd = openSync(path, "a+", 0o600);
  if (load().symbols.flock(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    return null;
  }
  let open = true;
  return {
    path,
    write(text) {
      writeFileSync(path, text);
    },
    release() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** Whether some process holds the lock right now. */
export function isLocked(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return false;
  }
  try {
    if (load().symbols.flock(fd, LOCK_EX | LOCK_NB) !== 0) return true;
    return false;
  } finally {
    closeSync(fd); // closing drops the probe's lock, if it got one
  }
}
