import { ptr } from "bun:ffi";
import { closeSync, write, writeSync } from "node:fs";
import { libc } from "./libc.ts";

/**
 * Real kernel pipes. Bun's "pipe" stdio are AF_UNIX socketpairs, on which a child's
 * `echo x > /dev/stderr` or `cat /dev/stdin` fails with ENXIO; scripts written by agents
 * use those paths all the time, so children get pipe2() pipes instead.
 */
const O_CLOEXEC = 0o2000000;

/** Returns [readFd, writeFd], both close-on-exec (Bun dup2s the child's end into place). */
export function createPipe(): [number, number] {
  const fds = new Int32Array(2);
  if (libc().pipe2(ptr(fds) as unknown as number, O_CLOEXEC) !== 0) {
    throw new Error("pipe2() failed: too many open files?");
  }
  return [fds[0]!, fds[1]!];
}

/** A pipe whose read end yields `bytes` then EOF (small: it must fit the pipe's 64 KiB). */
export function pipeOf(bytes: Uint8Array): number {
  const [r, w] = createPipe();
  try {
    writeSync(w, bytes);
  } catch (e) {
    closeSync(r);
    throw e;
  } finally {
    closeSync(w);
  }
  return r;
}

/** Writes `text` to a pipe and closes it; off the event loop when it might not fit the pipe at once. */
export function writeAndClose(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  if (bytes.byteLength <= 60 * 1024) {
    try {
      writeSync(fd, bytes);
    } catch {
      // the reader is gone: the launcher died, which its exit status tells
    }
    closeSync(fd);
    return;
  }
  write(fd, bytes, () => closeSync(fd));
}

/** Closes `fd`, already closed or not (cleanup paths). */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {}
}
