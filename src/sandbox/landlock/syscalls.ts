import { dlopen, FFIType, ptr, read } from "bun:ffi";
import { CREATE_RULESET_VERSION, PR_SET_NO_NEW_PRIVS, RULE_PATH_BENEATH, SYS } from "./abi.ts";

/** The libc calls the Landlock level needs; opened on first use (never in the server's hot path). */
interface LandlockLibc {
  syscall(n: bigint, a: bigint, b: bigint, c: bigint, d: bigint, e: bigint): bigint;
  prctl(option: number, a: bigint, b: bigint, c: bigint, d: bigint): number;
  open(path: number, flags: number, mode: number): number;
  close(fd: number): number;
  execve(path: number, argv: number, envp: number): number;
  capset(header: number, data: number): number;
  __errno_location(): number;
}

let lib: LandlockLibc | null = null;

function libc(): LandlockLibc {
  lib ??= dlopen("libc.so.6", {
    // syscall(2) is variadic; glibc's is plain assembly that reads six integer registers.
    syscall: { args: [FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64], returns: FFIType.i64 },
    prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
    open: { args: [FFIType.ptr, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
    execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    capset: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    __errno_location: { args: [], returns: FFIType.ptr },
  }).symbols as unknown as LandlockLibc;
  return lib;
}

function errno(): number {
  return read.i32(libc().__errno_location() as never, 0);
}

/** A failed call, with the kernel's errno. */
export class SyscallError extends Error {
  constructor(what: string, readonly errno: number) {
    super(`${what} failed (errno ${errno})`);
  }
}

const cString = (s: string) => Buffer.from(`${s}\0`);

/** The Landlock ABI version, or the errno that says why there is none (ENOSYS, EOPNOTSUPP). */
export function landlockAbi(): number | SyscallError {
  const r = Number(libc().syscall(BigInt(SYS.createRuleset), 0n, 0n, BigInt(CREATE_RULESET_VERSION), 0n, 0n));
  return r >= 0 ? r : new SyscallError("landlock_create_ruleset(version)", errno());
}

export function createRuleset(attr: Buffer): number {
  const fd = Number(libc().syscall(BigInt(SYS.createRuleset), BigInt(ptr(attr)), BigInt(attr.byteLength), 0n, 0n, 0n));
  if (fd < 0) throw new SyscallError("landlock_create_ruleset", errno());
  return fd;
}

/** Adds a path-beneath rule for the open path `fd`. */
export function addPathRule(rulesetFd: number, fd: number, access: bigint): void {
  const attr = Buffer.alloc(12); // struct landlock_path_beneath_attr is packed: u64 + s32
  attr.writeBigUInt64LE(access, 0);
  attr.writeInt32LE(fd, 8);
  const r = Number(libc().syscall(BigInt(SYS.addRule), BigInt(rulesetFd), BigInt(RULE_PATH_BENEATH), BigInt(ptr(attr)), 0n, 0n));
  if (r < 0) throw new SyscallError("landlock_add_rule", errno());
}

export function restrictSelf(rulesetFd: number): void {
  if (libc().prctl(PR_SET_NO_NEW_PRIVS, 1n, 0n, 0n, 0n) !== 0) throw new SyscallError("prctl(PR_SET_NO_NEW_PRIVS)", errno());
  const r = Number(libc().syscall(BigInt(SYS.restrictSelf), BigInt(rulesetFd), 0n, 0n, 0n, 0n));
  if (r < 0) throw new SyscallError("landlock_restrict_self", errno());
}

const O_PATH = 0o10000000;
const O_CLOEXEC = 0o2000000;

/** An O_PATH descriptor of `path` (following symlinks), or null when it cannot be opened. */
export function openPath(path: string): number | null {
  const fd = libc().open(ptr(cString(path)) as never, O_PATH | O_CLOEXEC, 0);
  return fd >= 0 ? fd : null;
}

export function closeFd(fd: number): void {
  libc().close(fd);
}

/** Replaces this process with `file` (argv, envp); returns only on failure. */
export function execve(file: string, argv: string[], env: string[]): SyscallError {
  const keep = [file, ...argv, ...env].map(cString); // alive until execve returns
  const table = (strings: Buffer[]) => {
    const t = new BigUint64Array(strings.length + 1);
    strings.forEach((s, i) => (t[i] = BigInt(ptr(s))));
    return t;
  };
  const argvTable = table(keep.slice(1, 1 + argv.length));
  const envTable = table(keep.slice(1 + argv.length));
  libc().execve(ptr(keep[0]!) as never, ptr(argvTable) as never, ptr(envTable) as never);
  return new SyscallError(`execve(${file})`, errno());
}

const PR_CAPBSET_DROP = 24;
const PR_CAP_AMBIENT = 47;
const PR_CAP_AMBIENT_CLEAR_ALL = 4;
const PR_SET_SECCOMP = 22;
const SECCOMP_MODE_FILTER = 2;
const LINUX_CAPABILITY_VERSION_3 = 0x20080522;

/**
 * No capabilities for the command, root included (SPEC §20): the bounding set is emptied
 * (so an exec as root gains none back), then the ambient, effective, permitted and
 * inheritable sets. Without CAP_SYS_ADMIN, sethostname fails; without CAP_DAC_OVERRIDE,
 * root is held by file modes like anyone.
 */
export function dropCapabilities(): void {
  for (let cap = 0; cap < 64; cap++) libc().prctl(PR_CAPBSET_DROP, BigInt(cap), 0n, 0n, 0n); // EINVAL past the last one
  libc().prctl(PR_CAP_AMBIENT, BigInt(PR_CAP_AMBIENT_CLEAR_ALL), 0n, 0n, 0n);
  const header = new Uint32Array([LINUX_CAPABILITY_VERSION_3, 0]);
  const data = new Uint32Array(6); // two of {effective, permitted, inheritable}, all zero
  if (libc().capset(ptr(header) as never, ptr(data) as never) !== 0) throw new SyscallError("capset", errno());
}

/** Loads a classic BPF seccomp filter (no_new_privs must be set first: restrictSelf does). */
export function applySeccomp(program: Buffer): void {
  const fprog = Buffer.alloc(16); // struct sock_fprog: u16 len, padding, pointer
  fprog.writeUInt16LE(program.byteLength / 8, 0);
  fprog.writeBigUInt64LE(BigInt(ptr(program)), 8);
  if (libc().prctl(PR_SET_SECCOMP, BigInt(SECCOMP_MODE_FILTER), BigInt(ptr(fprog)), 0n, 0n) !== 0) throw new SyscallError("prctl(PR_SET_SECCOMP)", errno());
}
