import { ptr } from "bun:ffi";
import { constants, openSync, statfsSync } from "node:fs";
import type { WatchPoint } from "../../sandbox/planted/watch-point.ts";
import { libc } from "../kernel/libc.ts";
import { closeQuietly } from "../kernel/pipes.ts";

const IN_MOVED_FROM = 0x40;
const IN_MOVED_TO = 0x80;
const IN_CREATE = 0x100;
const IN_DELETE = 0x200;
const IN_DELETE_SELF = 0x400;
const IN_MOVE_SELF = 0x800;
const IN_UNMOUNT = 0x2000;
const IN_Q_OVERFLOW = 0x4000;
const IN_IGNORED = 0x8000;
const IN_ONLYDIR = 0x01000000;
const IN_DONT_FOLLOW = 0x02000000;
const IN_ISDIR = 0x40000000;
const IN_NONBLOCK = 0o4000;
const IN_CLOEXEC = 0o2000000;
/** What changes a folder's entries (and the folder itself going), which is all a path's identity depends on. */
const ENTRY_EVENTS = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;
/** Events that matter whatever their name: the watched folder went, or events were lost. */
const ALWAYS = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED;
const POLLPRI = 0x2;
const POLLERR = 0x8;
/** Filesystems whose changes made elsewhere (another host, a FUSE daemon) inotify does not see. */
const UNWATCHABLE_FS = new Set([0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x65735546, 0x01021997, 0x00c36400, 0x5346414f, 0x73757245, 0x564c, 0x0bd00bd0, 0x01161970, 0x7461636f]);
/** More folders than this are not watched: the look is then made at every command, as without a watch. */
const MAX_POINTS = 2000;

/**
 * Whether the entries that make a path what it is have changed since a moment, through
 * inotify: one nonblocking read (and one poll of the mount table) per question, where looking
 * again takes a `stat` per path. A path's identity (device, inode, birth, type) changes only
 * when an entry on its way is made, removed or renamed, or a mount appears on it; the kernel
 * queues the event in the call that does it, so a question asked after that call has
 * returned sees it. Not used (null) where it could miss a change: no inotify, the watch
 * limit reached, a folder missing or on a network or FUSE filesystem.
 */
export class EntryWatch {
  private readonly wanted = new Map<number, { names: Set<string>; folders: boolean }>();
  private readonly events = new Uint8Array(16 * 1024);
  private readonly pollFd = new Int32Array(2);
  private seen = false;

  private constructor(
    private fd: number,
    private readonly mounts: number,
  ) {
    this.pollFd[0] = mounts;
    this.pollFd[1] = POLLPRI; // short events in the low half (little-endian), revents above
  }

  /** Watches `points` from now on; null when not all of them can be watched. */
  static of(points: WatchPoint[]): EntryWatch | null {
    if (process.platform !== "linux" || points.length > MAX_POINTS) return null;
    let fd = -1;
    let mounts = -1;
    try {
      fd = libc().inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
      if (fd < 0) return null;
      mounts = openSync("/proc/self/mounts", constants.O_RDONLY);
      const watch = new EntryWatch(fd, mounts);
      for (const point of points) if (!watch.add(point)) return watch.close(), null;
      return watch;
    } catch {
      if (fd >= 0) closeQuietly(fd);
      if (mounts >= 0) closeQuietly(mounts);
      return null;
    }
  }

  private add(point: WatchPoint): boolean {
    if (UNWATCHABLE_FS.has(statfsSync(point.dir).type)) return false;
    const wd = libc().inotify_add_watch(this.fd, ptr(Buffer.from(`${point.dir}\0`)), ENTRY_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW);
    if (wd < 0) return false;
    const entry = this.wanted.get(wd) ?? { names: new Set<string>(), folders: false };
    for (const name of point.names ?? []) entry.names.add(name);
    entry.folders ||= point.folders === true;
    this.wanted.set(wd, entry);
    return true;
  }

  /** Whether a watched entry (or the mount table) changed since the watch began; once true, always. */
  changed(): boolean {
    if (this.seen) return true;
    for (;;) {
      const n = libc().read(this.fd, ptr(this.events), this.events.byteLength);
      if (n <= 0) break;
      if (this.matters(n)) return (this.seen = true);
    }
    this.pollFd[1] = POLLPRI;
    libc().poll(ptr(this.pollFd), 1, 0);
    if ((this.pollFd[1] >>> 16) & (POLLPRI | POLLERR)) return (this.seen = true);
    return false;
  }

  private matters(length: number): boolean {
    const view = new DataView(this.events.buffer, 0, length);
    for (let at = 0; at + 16 <= length; ) {
      const wd = view.getInt32(at, true);
      const mask = view.getUint32(at + 4, true);
      const nameLength = view.getUint32(at + 12, true);
      const nameBytes = this.events.subarray(at + 16, at + 16 + nameLength);
      at += 16 + nameLength;
      if (mask & ALWAYS) return true;
      const entry = this.wanted.get(wd);
      if (!entry) continue;
      if (entry.folders && mask & IN_ISDIR) return true;
      if (entry.names.size === 0) continue;
      const end = nameBytes.indexOf(0);
      if (entry.names.has(Buffer.from(nameBytes.buffer, nameBytes.byteOffset, end < 0 ? nameBytes.byteLength : end).toString())) return true;
    }
    return false;
  }

  /** Ends the watch: from now on it says "changed" (it can no longer tell). */
  close(): void {
    if (this.fd < 0) return;
    this.seen = true;
    closeQuietly(this.fd);
    closeQuietly(this.mounts);
    this.fd = -1;
  }
}
