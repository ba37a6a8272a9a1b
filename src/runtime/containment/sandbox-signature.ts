import { lstatSync } from "node:fs";
import { join } from "node:path";
import { hiddenPaths } from "../../sandbox/namespaces/bwrap.ts";
import { gitProtection, gitWatchPoints } from "../../sandbox/planted/git-guard.ts";
import type { SandboxPolicy } from "../../sandbox/policy.ts";
import type { WatchPoint } from "../../sandbox/planted/watch-point.ts";
import { EntryWatch } from "./entry-watch.ts";

/**
 * What a kept sandbox is built over (runtime/containment/kept-sandbox.ts), checked before every command: the
 * hidden paths, the git files it protects and the writable roots, each as the very file it
 * was (device, inode, birth). A secret or `.git/config` replaced outside since (a new file
 * at the same path), or a root removed and made again, is a new file: the old sandbox would
 * cover the old one, so it is not used.
 *
 * Looking costs a `stat` per path (~40), ~0.1–0.2 ms a command. So the look is kept while an
 * inotify watch on the folder entries it depends on (entry-watch.ts) says none changed: a
 * command then pays one read of the watch. Where no such watch can be had, the look is made
 * at every command (shared by the calls of one turn of the event loop: a burst).
 */
export function sandboxSignature(policy: SandboxPolicy, cwd: string): string {
  const watched = watchedLooks(policy);
  const looks = watched ? watched.signatures : lookThisTurn(policy);
  let signature = looks.get(cwd);
  if (signature === undefined) looks.set(cwd, (signature = lookAtFiles(policy, cwd)));
  return signature;
}

function lookAtFiles(policy: SandboxPolicy, cwd: string): string {
  const git = gitProtection(policy.workspaceRoots);
  const paths = [...hiddenPaths(policy, cwd).map((h) => h.path), ...git.pin, ...git.readOnly, ...policy.readOnlyUnderWritable, ...policy.writableRoots];
  return paths.map((p) => `${p}=${identity(p)}`).join("\n");
}

function identity(path: string): string {
  const st = lstatSync(path, { throwIfNoEntry: false });
  return st ? `${st.dev}:${st.ino}:${st.birthtimeMs}:${st.isDirectory() ? "d" : "f"}` : "gone";
}

/** Calls handled in one turn of the event loop share one look at the files. */
function lookThisTurn(policy: SandboxPolicy): Map<string, string> {
  let turn = signaturesThisTurn.get(policy);
  if (!turn) {
    if (signaturesThisTurn.size === 0) setImmediate(() => signaturesThisTurn.clear());
    signaturesThisTurn.set(policy, (turn = new Map()));
  }
  return turn;
}
const signaturesThisTurn = new Map<SandboxPolicy, Map<string, string>>();

/** A policy's files under watch, and the looks (by working directory) made since the watch began. */
interface Watched {
  watch: EntryWatch;
  signatures: Map<string, string>;
}
const watches = new Map<SandboxPolicy, Watched>();
/** Policies whose files cannot be watched (a symlink on the way, a network filesystem, the watch limit): looked at every time. */
const unwatchable = new WeakSet<SandboxPolicy>();
/** Watches that could not be started, by policy: a folder may have gone between the walk and its watch, so a few tries. */
const failedWatches = new WeakMap<SandboxPolicy, number>();
const MAX_FAILED_WATCHES = 3;
/** Policies watched at once, at most (the oldest watch goes): a server has a few. */
const MAX_WATCHES = 8;

/** The policy's current watch, started anew when a change was seen; null when none can be had now. */
function watchedLooks(policy: SandboxPolicy): Watched | null {
  const current = watches.get(policy);
  if (current && !current.watch.changed()) return current;
  current?.watch.close();
  watches.delete(policy);
  if (unwatchable.has(policy)) return null;
  const watched = startWatch(policy);
  if (!watched) return null;
  if (watches.size >= MAX_WATCHES) {
    const [oldest, entry] = watches.entries().next().value!;
    entry.watch.close();
    watches.delete(oldest);
  }
  watches.set(policy, watched);
  return watched;
}

/**
 * Watches what the look depends on, then makes sure that was still all of it once the watch
 * was in place (a folder made meanwhile would go unwatched): the looks made from now on hold
 * until the watch sees a change.
 */
function startWatch(policy: SandboxPolicy): Watched | null {
  const first = watchPoints(policy);
  const watch = first && EntryWatch.of(first.points);
  if (!watch) {
    const failures = (failedWatches.get(policy) ?? 0) + 1;
    failedWatches.set(policy, failures);
    if (!first || failures >= MAX_FAILED_WATCHES) unwatchable.add(policy);
    return null;
  }
  const again = watchPoints(policy);
  if (!again || key(again.points) !== key(first.points)) {
    watch.close(); // changing as we looked: looked at again next time
    return null;
  }
  // The git walk made under the watch serves the git guard too, as long as the watch says it holds.
  again.keepWalk(() => !watch.changed());
  return { watch, signatures: new Map() };
}

/**
 * The folder entries on the way to every path the look reads, and those of a fresh git walk
 * (which cover the git files it protects, below the writable roots); null if one cannot be
 * watched.
 */
function watchPoints(policy: SandboxPolicy): { points: WatchPoint[]; keepWalk: (stillTrue: () => boolean) => void } | null {
  const byDir = new Map<string, Set<string>>();
  // The hidden paths are followed (stat): a symlink among them could change target unseen.
  for (const [paths, followed] of [[policy.denyRead, true], [[...policy.readOnlyUnderWritable, ...policy.writableRoots], false]] as const) {
    for (const path of paths) if (!entriesOnTheWay(path, followed, byDir)) return null;
  }
  const walked = gitWatchPoints(policy.workspaceRoots);
  return { points: [...[...byDir].map(([dir, names]) => ({ dir, names: [...names] })), ...walked.points], keepWalk: walked.keep };
}

/**
 * Adds to `byDir` each folder on the way to `path` with the name taken there, down to the
 * first one missing (its making is an entry in the folder before). False on a symlink on the
 * way (or at the end, when `followed`).
 */
function entriesOnTheWay(path: string, followed: boolean, byDir: Map<string, Set<string>>): boolean {
  const parts = path.split("/").filter(Boolean);
  let dir = "/";
  for (let i = 0; i < parts.length; i++) {
    const name = parts[i]!;
    let names = byDir.get(dir);
    if (!names) byDir.set(dir, (names = new Set()));
    names.add(name);
    const next = join(dir, name);
    let st;
    try {
      st = lstatSync(next, { throwIfNoEntry: false });
    } catch {
      return false; // not to be looked at (EACCES and the like): not watched either
    }
    const last = i === parts.length - 1;
    if (!st) return true;
    if (st.isSymbolicLink() && (!last || followed)) return false;
    if (!last && !st.isDirectory()) return true; // a file on the way: nothing below it
    dir = next;
  }
  return true;
}

function key(points: WatchPoint[]): string {
  return points
    .map((p) => `${p.dir}\0${[...(p.names ?? [])].sort().join("/")}\0${p.folders === true}`)
    .sort()
    .join("\n");
}
