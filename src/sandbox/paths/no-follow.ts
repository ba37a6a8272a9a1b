import { dlopen, FFIType, read } from "bun:ffi";
import { closeSync, constants, fchmodSync, fstatSync, openSync, readFileSync, type Stats, writeSync } from "node:fs";
import { relative, sep } from "node:path";

/**
 * Files a sandboxed command could have written are opened by the server without following a
 * symbolic link at any component below the root they lie in (SPEC §26): each folder on the
 * way is opened relative to the one before with O_NOFOLLOW, so a link planted anywhere on the
 * path fails the open (ELOOP/ENOTDIR) instead of steering the server — often root — to a file
 * outside. What the server then does, it does to the opened descriptor (fchmod, read, write).
 */
interface NoFollowLibc {
  openat(dirfd: number, path: Uint8Array, flags: number, mode: number): number;
  unlinkat(dirfd: number, path: Uint8Array, flags: number): number;
  mkdirat(dirfd: number, path: Uint8Array, mode: number): number;
  __errno_location(): number;
}

let lib: NoFollowLibc | null = null;

function libc(): NoFollowLibc {
  lib ??= dlopen("libc.so.6", {
    openat: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.u32], returns: FFIType.i32 },
    unlinkat: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
    mkdirat: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    __errno_location: { args: [], returns: FFIType.ptr },
  }).symbols as unknown as NoFollowLibc;
  return lib;
}

const ELOOP = 40;

/** A failed open or unlink below a root, with the kernel's errno (ELOOP: a link was met). */
export class NoFollowError extends Error {
  constructor(
    readonly path: string,
    readonly errno: number,
  ) {
    super(`${path}: errno ${errno}${errno === ELOOP ? " (a symbolic link on the way)" : ""}`);
  }
  get isLink(): boolean {
    return this.errno === ELOOP || this.errno === 20; /* ENOTDIR: a link to a file where a folder was expected */
  }
}

function cString(s: string): Uint8Array {
  return new TextEncoder().encode(`${s}\0`);
}

function errno(): number {
  return read.i32(libc().__errno_location() as never, 0);
}

/** The components of `path` below `root`; null when it is not below it (or is it). */
function componentsBelow(root: string, path: string): string[] | null {
  const rel = relative(root, path);
  if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) return null;
  const parts = rel.split(sep);
  return parts.some((p) => p === "" || p === "." || p === "..") ? null : parts;
}

/** Opens the folder holding `path` (no link followed below `root`) and gives it with the last name. */
function openParent(root: string, path: string): { dirfd: number; name: string } {
  const parts = componentsBelow(root, path);
  if (!parts) throw new NoFollowError(path, 22 /* EINVAL */);
  let dirfd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
  for (const part of parts.slice(0, -1)) {
    const next = libc().openat(dirfd, cString(part), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | 0o2000000 /* O_CLOEXEC */, 0);
    const err = next < 0 ? errno() : 0;
    closeSync(dirfd);
    if (next < 0) throw new NoFollowError(path, err);
    dirfd = next;
  }
  return { dirfd, name: parts[parts.length - 1]! };
}

/**
 * Opens `path`, which lies below `root`, following no link at any component; `flags` are
 * open(2)'s (O_NOFOLLOW and O_CLOEXEC are added). Throws a NoFollowError.
 */
export function openBelow(root: string, path: string, flags: number, mode = 0o600): number {
  const { dirfd, name } = openParent(root, path);
  try {
    const fd = libc().openat(dirfd, cString(name), flags | constants.O_NOFOLLOW | 0o2000000, mode);
    if (fd < 0) throw new NoFollowError(path, errno());
    return fd;
  } finally {
    closeSync(dirfd);
  }
}

/** Removes the entry `path` itself (a link is removed, never followed); true when it went. */
export function removeBelow(root: string, path: string): boolean {
  try {
    const { dirfd, name } = openParent(root, path);
    try {
      return libc().unlinkat(dirfd, cString(name), 0) === 0;
    } finally {
      closeSync(dirfd);
    }
  } catch {
    return false;
  }
}

/** Makes the folder `path` (its parent must exist; no link followed on the way); true when it is made. */
export function makeFolderBelow(root: string, path: string, mode = 0o755): boolean {
  try {
    const { dirfd, name } = openParent(root, path);
    try {
      return libc().mkdirat(dirfd, cString(name), mode) === 0;
    } finally {
      closeSync(dirfd);
    }
  } catch {
    return false;
  }
}

/** The root among `roots` that `path` lies below (the deepest), or null. */
export function rootOf(roots: readonly string[], path: string): string | null {
  let found: string | null = null;
  for (const root of roots) if (componentsBelow(root, path) && (!found || root.length > found.length)) found = root;
  return found;
}

/** Runs `act` on `path` opened read-only with no link followed; null when it cannot be opened so. */
export function withFileBelow<T>(root: string, path: string, flags: number, act: (fd: number, st: Stats) => T): T | null {
  let fd: number;
  try {
    fd = openBelow(root, path, flags);
  } catch {
    return null;
  }
  try {
    return act(fd, fstatSync(fd));
  } finally {
    closeSync(fd);
  }
}

/** A regular file's bytes (at most `max`), read with no link followed below `root`; null if it cannot be. */
export function readBelow(root: string, path: string, max: number): Buffer | null {
  return withFileBelow(root, path, constants.O_RDONLY, (fd, st) => {
    if (!st.isFile() || st.size > max) return null;
    const bytes = readFileSync(fd);
    return bytes.length <= max ? bytes : null;
  });
}

/** Writes `bytes` as the whole of `path` (made if missing) with `mode`, no link followed below `root`; true when written. */
export function writeBelow(root: string, path: string, bytes: Buffer, mode: number): boolean {
  try {
    const fd = openBelow(root, path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, mode);
    try {
      writeSync(fd, bytes, 0, bytes.length, 0);
      fchmodSync(fd, mode);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch {
    return false;
  }
}
