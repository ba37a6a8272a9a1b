import { ptr } from "bun:ffi";
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
