import { dlopen, FFIType, read } from "bun:ffi";
import { CREATE_RULESET_VERSION, SYS } from "./abi.ts";

/**
 * The one Landlock call the server makes itself: asking the kernel's ABI version. Rulesets
 * are built and applied by the spawn helper (runtime/spawn-helper/), in the command's process.
 */
interface LandlockLibc {
  syscall(n: bigint, a: bigint, b: bigint, c: bigint, d: bigint, e: bigint): bigint;
  __errno_location(): number;
}

let lib: LandlockLibc | null = null;

function libc(): LandlockLibc {
  lib ??= dlopen("libc.so.6", {
    // syscall(2) is variadic; glibc's is plain assembly that reads six integer registers.
    syscall: { args: [FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64], returns: FFIType.i64 },
    __errno_location: { args: [], returns: FFIType.ptr },
  }).symbols as unknown as LandlockLibc;
  return lib;
}

/** A failed call, with the kernel's errno. */
export class SyscallError extends Error {
  constructor(
    what: string,
    readonly errno: number,
  ) {
    super(`${what} failed (errno ${errno})`);
  }
}

/** The Landlock ABI version, or the errno that says why there is none (ENOSYS, EOPNOTSUPP). */
export function landlockAbi(): number | SyscallError {
  const r = Number(libc().syscall(BigInt(SYS.createRuleset), 0n, 0n, BigInt(CREATE_RULESET_VERSION), 0n, 0n));
  return r >= 0 ? r : new SyscallError("landlock_create_ruleset(version)", read.i32(libc().__errno_location() as never, 0));
}
