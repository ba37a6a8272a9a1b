/**
 * Landlock's kernel interface (linux/landlock.h): syscall numbers, access-right bits and the
 * rights each ABI version knows. The numbers are the generic ones, the same on x86-64 and
 * arm64.
 */
export const SYS = { createRuleset: 444, addRule: 445, restrictSelf: 446 } as const;
export const CREATE_RULESET_VERSION = 1;

/** Filesystem access rights, bit N for the Nth name (REFER from ABI 2, TRUNCATE 3, IOCTL_DEV 5). */
const FS_RIGHTS = [
  "EXECUTE", "WRITE_FILE", "READ_FILE", "READ_DIR", "REMOVE_DIR", "REMOVE_FILE", "MAKE_CHAR", "MAKE_DIR",
  "MAKE_REG", "MAKE_SOCK", "MAKE_FIFO", "MAKE_BLOCK", "MAKE_SYM", "REFER", "TRUNCATE", "IOCTL_DEV",
] as const;
export const FS = Object.fromEntries(FS_RIGHTS.map((name, bit) => [name, 1n << BigInt(bit)])) as Record<(typeof FS_RIGHTS)[number], bigint>;

export const NET = { BIND_TCP: 1n << 0n, CONNECT_TCP: 1n << 1n } as const; // ABI 4
export const SCOPE = { ABSTRACT_UNIX_SOCKET: 1n << 0n, SIGNAL: 1n << 1n } as const; // ABI 6

/** Every filesystem right the kernel of `abi` can enforce (the ruleset handles all of them). */
export function handledFs(abi: number): bigint {
  let all = (1n << 13n) - 1n;
  if (abi >= 2) all |= FS.REFER;
  if (abi >= 3) all |= FS.TRUNCATE;
  if (abi >= 5) all |= FS.IOCTL_DEV;
  return all;
}

/** Rights that make sense on a file (a rule on a non-directory may hold only these). */
export const FILE_RIGHTS = FS.EXECUTE | FS.WRITE_FILE | FS.READ_FILE | FS.TRUNCATE | FS.IOCTL_DEV;

/** Reading and running: what every path outside the denied ones gets. */
export const READ_RIGHTS = FS.EXECUTE | FS.READ_FILE | FS.READ_DIR;

/**
 * Changing a tree. Device nodes are never made (root could otherwise mknod a disk inside a
 * writable root and write it raw).
 */
export const WRITE_RIGHTS =
  FS.WRITE_FILE | FS.REMOVE_DIR | FS.REMOVE_FILE | FS.MAKE_DIR | FS.MAKE_REG | FS.MAKE_SOCK | FS.MAKE_FIFO | FS.MAKE_SYM | FS.REFER | FS.TRUNCATE;
