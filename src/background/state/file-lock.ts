import { closeSync } from "node:fs";
import { libc } from "../../runtime/kernel/libc.ts";
import { openPrivateAppend } from "./private-files.ts";

/**
 * Advisory whole-file locks (flock). The kernel drops a lock when its holder dies, so a
 * lock that can be taken means its previous owner is gone — however it died.
 */
const LOCK_EX = 2;
const LOCK_NB = 4;

export interface FileLock {
  release(): void;
}

/** Takes an exclusive lock on `path` (created if needed) without waiting; null if someone holds it. */
export function tryLock(path: string): FileLock | null {
  const fd = openPrivateAppend(path);
  if (libc().flock(fd, LOCK_EX | LOCK_NB) !== 0) {
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
