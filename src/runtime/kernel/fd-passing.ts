import { ptr } from "bun:ffi";
import { libc } from "./libc.ts";

/** Unix sockets that carry file descriptors (SCM_RIGHTS), which Bun does not offer. Linux, 64-bit. */
const AF_UNIX = 1;
const SOCK_SEQPACKET = 5;
const SOCK_CLOEXEC = 0o2000000;
const SOL_SOCKET = 1;
const SCM_RIGHTS = 1;
const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;
const MSG_CMSG_CLOEXEC = 0x40000000;

/** A connected pair of message sockets (each message arrives whole), both close-on-exec. */
export function messageSocketPair(): [number, number] {
  const fds = new Int32Array(2);
  if (libc().socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ptr(fds) as unknown as number) !== 0) {
    throw new Error("socketpair() failed: too many open files?");
  }
  return [fds[0]!, fds[1]!];
}

/**
 * Sends `bytes` as one message with `fds` attached, without blocking; false if it could not go
 * whole (a full socket, a closed peer). The kernel holds its own references to the fds once sent.
 */
export function sendWithFds(socket: number, bytes: Uint8Array, fds: number[]): boolean {
  // struct iovec { base, len }
  const iov = new BigUint64Array([BigInt(ptr(bytes)), BigInt(bytes.byteLength)]);
  // struct cmsghdr { size_t len; int level; int type; int fds[] }, padded to 8 bytes
  const length = 16 + 4 * fds.length;
  const control = new DataView(new ArrayBuffer((length + 7) & ~7));
  control.setBigUint64(0, BigInt(length), true);
  control.setInt32(8, SOL_SOCKET, true);
  control.setInt32(12, SCM_RIGHTS, true);
  fds.forEach((fd, i) => control.setInt32(16 + 4 * i, fd, true));
  // struct msghdr { name, namelen, iov, iovlen, control, controllen, flags }
  const message = new DataView(new ArrayBuffer(56));
  message.setBigUint64(16, BigInt(ptr(iov)), true);
  message.setBigUint64(24, 1n, true);
  message.setBigUint64(32, BigInt(ptr(control)), true);
  message.setBigUint64(40, BigInt(control.byteLength), true);
  return libc().sendmsg(socket, ptr(message) as unknown as number, MSG_DONTWAIT | MSG_NOSIGNAL) === bytes.byteLength;
}

/**
 * The fds of one message waiting on `socket` (at most `max`), without blocking; null when none
 * is there. They are close-on-exec in this process (MSG_CMSG_CLOEXEC).
 */
export function receiveFds(socket: number, max: number): number[] | null {
  const bytes = new Uint8Array(64);
  const iov = new BigUint64Array([BigInt(ptr(bytes)), BigInt(bytes.byteLength)]);
  const control = new DataView(new ArrayBuffer((16 + 4 * max + 7) & ~7));
  const message = new DataView(new ArrayBuffer(56));
  message.setBigUint64(16, BigInt(ptr(iov)), true);
  message.setBigUint64(24, 1n, true);
  message.setBigUint64(32, BigInt(ptr(control)), true);
  message.setBigUint64(40, BigInt(control.byteLength), true);
  if (libc().recvmsg(socket, ptr(message) as unknown as number, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0) return null;
  const controlLength = Number(message.getBigUint64(40, true));
  if (controlLength < 16 || control.getInt32(8, true) !== SOL_SOCKET || control.getInt32(12, true) !== SCM_RIGHTS) return [];
  const count = (Number(control.getBigUint64(0, true)) - 16) / 4;
  return Array.from({ length: count }, (_, i) => control.getInt32(16 + 4 * i, true));
}
