import { constants, readdirSync, renameSync, rmSync } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { makePrivateDir, umaskKeepsOwnerBits } from "./private-files.ts";

/** How many are kept ready: the first starts of a burst, and every start at an agent's pace. */
const KEPT = 4;
/** How long the server must be quiet before the next one is made (a burst is not slowed by it). */
const QUIET_MS = 20;
const PREFIX = ".spare-";

/**
 * A background task's log folder with its empty `stdout.log` and `stderr.log` (SPEC §5: they
 * exist from launch), made ahead while the server is quiet and renamed into place at a start.
 * Making a folder and two files costs the kernel up to 1.8 ms of CPU on an ext4 where many
 * files were deleted lately (an inode each; 10–20 µs on a fresh one, 0.03 ms on tmpfs), a
 * rename 0.02 ms. One is made per quiet moment, off the event loop (makeOffLoop): 0700, files
 * 0600 created exclusively, no link followed; the spools then open the files.
 */
export class SpareTaskFolders {
  private ready: string[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private count = 0;
  private closed = false;

  constructor(private readonly tasksDir: string) {}

  /** Makes `target` (a task's folder, not there yet) from a spare; false when none is ready (the spools make it). */
  claim(target: string): boolean {
    this.refillWhenQuiet();
    for (let spare = this.ready.pop(); spare !== undefined; spare = this.ready.pop()) {
      try {
        renameSync(spare, target); // fails on a non-empty target: nothing that holds logs is replaced
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") continue; // removed meanwhile: the next one
        this.ready.push(spare);
        return false;
      }
    }
    return false;
  }

  /**
   * Makes `target` and its empty logs off the event loop (a spare, or a start's folder when no
   * spare was ready): the kernel's work then runs on another core while the loop goes on. Only
   * what is not there yet is made (a new folder, files created exclusively, no link followed);
   * anything else is left to the spools, which make their files on first use and say why not.
   * True when it made all three.
   */
  async makeOffLoop(target: string): Promise<boolean> {
    if (!umaskKeepsOwnerBits) return false; // modes would need a chmod each: the spools do it
    try {
      await mkdir(target, { mode: 0o700 });
    } catch {
      return false; // there already (or not possible): the spools check what is there, and say why not
    }
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    const made = await Promise.all(["stdout.log", "stderr.log"].map((name) => open(join(target, name), flags, 0o600).then((f) => f.close().then(() => true), () => false)));
    return made.every(Boolean);
  }

  /** Removes what is ready and stops making more (the owner folder is closing). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const spare of this.ready.splice(0)) rmSync(spare, { recursive: true, force: true });
  }

  /** Spares a registry left behind when it was killed: never renamed into place, they go. */
  static sweep(tasksDir: string): void {
    let names: string[];
    try {
      names = readdirSync(tasksDir);
    } catch {
      return;
    }
    for (const name of names) if (name.startsWith(PREFIX)) rmSync(join(tasksDir, name), { recursive: true, force: true });
  }

  private refillWhenQuiet(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.ready.length >= KEPT) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.makeOne().then((made) => made && this.refillWhenQuiet());
    }, QUIET_MS);
    this.timer.unref?.();
  }

  private async makeOne(): Promise<boolean> {
    if (this.closed) return false;
    const dir = join(this.tasksDir, `${PREFIX}${process.pid}-${++this.count}`);
    let made = false;
    try {
      makePrivateDir(this.tasksDir); // there after the first start: only checked
      made = await this.makeOffLoop(dir);
    } catch {
      made = false;
    }
    if (!made || this.closed) {
      rmSync(dir, { recursive: true, force: true });
      return false; // the state dir is unwritable (starts make their folders, and report why), or closing
    }
    this.ready.push(dir);
    return true;
  }
}
