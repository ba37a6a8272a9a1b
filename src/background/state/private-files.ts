import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, realpathSync, statSync, unlinkSync, writeSync } from "node:fs";
import { open, unlink } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";

/**
 * Files and folders of the state dir, made private whatever the umask and never reached
 * through a link planted by someone else (SPEC §14): folders 0700, files 0600, opened with
 * O_NOFOLLOW; whole-file writes go to a fresh O_EXCL file. Folders made below an owner
 * folder must resolve inside it, so a planted `tasks/<id>` symlink cannot send logs elsewhere.
 */

const uid = () => process.getuid?.() ?? -1;

/**
 * Whether the umask leaves the owner's bits alone (almost always): then a folder made 0700
 * or a file made 0600 has exactly that mode, and the chmod that would make it exact is
 * skipped (each is a journaled write, ~0.3 ms here).
 */
export const umaskKeepsOwnerBits = (process.umask() & 0o700) === 0;

/** Owner folders already verified (and where they really are): every folder made below one must stay inside it. */
const roots = new Map<string, string>();

export function trustRoot(dir: string): void {
  roots.set(resolve(dir), realpathSync(dir));
}

export function forgetRoot(dir: string): void {
  roots.delete(resolve(dir));
}

function inside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(".." + sep) && rel !== ".." && !rel.startsWith("/"));
}

/** Why `dir` may not hold private state, or null: it must be ours and not writable by group or others. */
export function privateDirProblem(dir: string, what: string, followLinks: boolean): string | null {
  let st;
  try {
    st = followLinks ? statSync(dir) : lstatSync(dir);
  } catch (e) {
    return `${what} ${dir} cannot be checked: ${(e as Error).message}`;
  }
  if (!st.isDirectory()) return `${what} ${dir} is not a directory${st.isSymbolicLink() ? " (it is a symbolic link)" : ""}; remove it or choose another --state-dir`;
  if (uid() >= 0 && st.uid !== uid()) {
    return `${what} ${dir} is owned by uid ${st.uid}, not by this user (uid ${uid()}): another user could read or plant files there; use a state dir of your own (--state-dir)`;
  }
  if (st.mode & 0o022) {
    const who = (st.mode & 0o022) === 0o022 ? "its group and others" : st.mode & 0o020 ? "its group" : "others";
    return `${what} ${dir} is writable by ${who} (mode ${(st.mode & 0o777).toString(8)}): run chmod go-w ${dir} (0700 is best) or choose another --state-dir`;
  }
  return null;
}

/** `mkdir -p` whose new folders are 0700; a folder below a trusted root must resolve inside it. */
export function makePrivateDir(dir: string): void {
  const abs = resolve(dir);
  const missing: string[] = [];
  for (let p = abs; ; p = dirname(p)) {
    try {
      lstatSync(p);
      break;
    } catch {
      missing.unshift(p);
      if (dirname(p) === p) break;
    }
  }
  for (const p of missing) {
    try {
      mkdirSync(p, { mode: 0o700 });
      if (!umaskKeepsOwnerBits) chmodSync(p, 0o700); // the umask may have taken bits away, never added
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  const root = [...roots].find(([r]) => inside(abs, r));
  if (root !== undefined && !inside(realpathSync(abs), root[1])) {
    throw new Error(`${abs} leads outside the state folder ${root[0]} (a symbolic link); remove it`);
  }
}

/** Opens a private file for appending: created 0600, never through a symlink, only if ours. */
export function openPrivateAppend(path: string, flags = constants.O_WRONLY): number {
  let fd: number;
  try {
    fd = openSync(path, flags | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ELOOP") throw new Error(`${path} is a symbolic link, which agent-shell never writes through; remove it`);
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`${path} is not a regular file`);
    if (uid() >= 0 && st.uid !== uid()) throw new Error(`${path} is owned by uid ${st.uid}, not by this user`);
    if (st.nlink > 1) throw new Error(`${path} has other hard links; remove it`);
    if ((st.mode & 0o777) !== 0o600) fchmodSync(fd, 0o600);
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * Writes a whole private file: whatever sits at `path` (a file, a planted link) is removed
 * and a fresh file is created exclusively, so no existing file is ever written through.
 */
export function writePrivateFile(path: string, data: string): void {
  let fd: number;
  try {
    fd = openSync(path, EXCLUSIVE_FLAGS, 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    unlinkSync(path);
    fd = openSync(path, EXCLUSIVE_FLAGS, 0o600);
  }
  try {
    if (!umaskKeepsOwnerBits) fchmodSync(fd, 0o600);
    const bytes = Buffer.from(data);
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
  } finally {
    closeSync(fd);
  }
}

/**
 * writePrivateFile off the event loop (the fs thread pool), for writes nothing waits on.
 * `onlyIfAbsent`: write only if nothing is at `path` yet; false when something was.
 */
export async function writePrivateFileAsync(path: string, data: string, opts: { onlyIfAbsent?: boolean } = {}): Promise<boolean> {
  const file = await open(path, EXCLUSIVE_FLAGS, 0o600).catch(async (e: NodeJS.ErrnoException) => {
    if (e.code !== "EEXIST") throw e;
    if (opts.onlyIfAbsent) return null;
    await unlink(path);
    return open(path, EXCLUSIVE_FLAGS, 0o600);
  });
  if (!file) return false;
  try {
    if (!umaskKeepsOwnerBits) await file.chmod(0o600);
    await file.writeFile(data);
  } finally {
    await file.close();
  }
  return true;
}

const EXCLUSIVE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Rewrites a private file in place, off the event loop: only a regular file of ours with no
 * other link (as openPrivateAppend checks), never through a symlink; false when there is none
 * to rewrite. Not atomic (a crash mid-write leaves it unreadable), but it makes no new inode:
 * on a busy ext4, allocating one costs up to a millisecond of kernel CPU.
 */
export async function rewritePrivateFileAsync(path: string, data: string): Promise<boolean> {
  const file = await open(path, constants.O_WRONLY | constants.O_NOFOLLOW).catch(() => null);
  if (!file) return false;
  try {
    const st = await file.stat();
    if (!st.isFile() || (uid() >= 0 && st.uid !== uid()) || st.nlink > 1) return false;
    const bytes = Buffer.from(data);
    await file.write(bytes, 0, bytes.byteLength, 0);
    await file.truncate(bytes.byteLength);
    return true;
  } finally {
    await file.close();
  }
}
