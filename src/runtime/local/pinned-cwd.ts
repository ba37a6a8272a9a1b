import { closeSync, constants, openSync, readlinkSync } from "node:fs";

/**
 * The validated working directory, held open while the child starts. The child changes
 * into `/proc/self/fd/N` — the very directory that was checked — so swapping a symlink in
 * after validation cannot move it elsewhere. If the path no longer names that directory
 * when it is opened, the spawn is refused.
 */
export function pinCwd(cwd: string): { path: string; fd: number | null; release(): void } {
  if (process.platform !== "linux") return { path: cwd, fd: null, release() {} };
  const fd = openSync(cwd, constants.O_RDONLY | constants.O_DIRECTORY);
  const path = `/proc/self/fd/${fd}`;
  try {
    // The kernel's own name for the open directory (realpath of a reused fd path may be cached).
    if (readlinkSync(path) !== cwd) throw new Error(`working directory ${cwd} changed while it was being checked; not running there`);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return { path, fd, release: () => closeSync(fd) };
}
