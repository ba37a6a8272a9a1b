import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { FILE_RIGHTS, FS, READ_RIGHTS, WRITE_RIGHTS } from "./abi.ts";
import type { SandboxPolicy } from "../policy.ts";

/** One Landlock rule: `rights` on `path` and everything beneath it. */
export interface PathRule {
  path: string;
  rights: bigint;
}

/** Beyond this many rules the expansion gives up (a directory with thousands of entries on the way to a secret). */
export const MAX_RULES = 4096;

/**
 * Devices a command may write (and the tty it may run on). Not the rest of /dev: root keeps
 * its capabilities at this level and could otherwise write a disk.
 */
const WRITABLE_DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"];

const isUnder = (path: string, dir: string) => path === dir || path.startsWith(dir === "/" ? "/" : `${dir}/`);

/**
 * The rules that give `policy` with Landlock, whose rules only ever allow. "Readable except
 * the secrets" becomes read rights on every sibling along the way from `/` to each denied
 * path: the directories on that way get only READ_DIR (listing works; a READ_FILE there
 * would reach the secret beneath). Symlinks get no rule of their own: access through one is
 * decided by the rules of what it points to.
 *
 * Writable roots get the write rights as whole trees. Landlock cannot carve a hole out of a
 * tree without taking file creation (and reading back new files) away from the tree's top
 * directory, so at this level `.git/hooks` and `.git/config` stay writable and a denied path
 * inside a writable root stays readable; the namespaces level protects both.
 * `listed` gets every directory whose entries the rules depend on.
 */
export function landlockRules(policy: SandboxPolicy, handled: bigint, listed: string[] = []): PathRule[] {
  const rules: PathRule[] = [];
  const denied = policy.denyRead.filter((d) => exists(d) && !policy.writableRoots.some((root) => isUnder(d, root)));
  const add = (path: string, rights: bigint) => {
    if (rules.length >= MAX_RULES) throw new Error(`more than ${MAX_RULES} Landlock rules would be needed to hide ${denied.join(", ")}`);
    rules.push({ path, rights: rights & handled });
  };
  const read = (path: string, isDir: boolean) => {
    // A hidden folder may be listed (walking the home works as outside), never read beneath.
    if (denied.includes(path)) return isDir ? add(path, FS.READ_DIR) : undefined;
    if (!denied.some((d) => d !== path && isUnder(d, path))) return add(path, isDir ? READ_RIGHTS | FS.IOCTL_DEV : (READ_RIGHTS | FS.IOCTL_DEV) & FILE_RIGHTS);
    add(path, FS.READ_DIR);
    listed.push(path);
    for (const name of readdirSync(path)) {
      const child = join(path, name);
      const st = lstatOrNull(child);
      if (!st || st.isSymbolicLink()) continue;
      read(child, st.isDirectory());
    }
  };
  read("/", true);
  for (const root of policy.writableRoots) add(root, WRITE_RIGHTS | READ_RIGHTS);
  for (const device of WRITABLE_DEVICES) {
    const st = lstatOrNull(device);
    if (!st || st.isSymbolicLink()) continue;
    add(device, st.isDirectory() ? WRITE_RIGHTS | READ_RIGHTS | FS.IOCTL_DEV : FS.WRITE_FILE | FS.READ_FILE | FS.IOCTL_DEV);
  }
  return rules;
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function exists(path: string): boolean {
  return lstatOrNull(path) !== null;
}
