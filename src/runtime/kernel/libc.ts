import { dlopen, FFIType } from "bun:ffi";

/** The few libc calls Bun does not offer, opened once on first use. */
interface Libc {
  pipe2(fds: number, flags: number): number;
  flock(fd: number, op: number): number;
  socketpair(domain: number, type: number, protocol: number, fds: number): number;
  sendmsg(fd: number, message: number, flags: number): number;
  recvmsg(fd: number, message: number, flags: number): number;
  read(fd: number, buffer: number, length: number): number;
  poll(fds: number, count: number, timeoutMs: number): number;
  inotify_init1(flags: number): number;
  inotify_add_watch(fd: number, path: number, mask: number): number;
}

let symbols: Libc | null = null;

export function libc(): Libc {
  symbols ??= dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", {
    pipe2: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    socketpair: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    sendmsg: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i64_fast },
    recvmsg: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i64_fast },
    read: { args: [FFIType.i32, FFIType.ptr, FFIType.u64], returns: FFIType.i64_fast },
    poll: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
    inotify_init1: { args: [FFIType.i32], returns: FFIType.i32 },
    inotify_add_watch: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  }).symbols as unknown as Libc;
  return symbols;
}
