import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, lstatSync, readdirSync, readFileSync, realpathSync, writeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { foldersIn } from "../../folders.ts";
import { disarmConfigText, programSettings, restoreLine } from "./git-config.ts";
import { makeFolderBelow, openBelow, readBelow, removeBelow, rootOf, writeBelow } from "../paths/no-follow.ts";
import type { SandboxLevel, SandboxPolicy } from "../policy.ts";
import type { WatchPoint } from "./watch-point.ts";

/**
 * git runs nothing a sandboxed command wrote (SPEC §20, §25, §26). In every repository below
 * the workspace roots, at any depth:
 * - `.git/hooks` is bound read-only and `.git` pinned (bound onto itself: a mount point cannot
 *   be renamed or removed, so `.git` cannot be moved aside and made anew) at the namespaces
 *   level; a `commondir` that exists is bound read-only; a `.git` file (a worktree's or
 *   submodule's link) read-only whole.
 * - `.git/config` stays writable (`git config`, `git remote add`, `git push -u`, submodules
 *   work): what would make git *run* a program from it is disarmed instead, when the file
 *   changes (plant-watch.ts) and when the command ends, and reported with the line that puts it
 *   back. Settings that were there before the command are left alone.
 * - A hook a command wrote where the mounts could not hold it (a repository it made, or the
 *   Landlock level, which has no read-only holes) loses its execute bits, or is put back as it
 *   was before the command when there was one.
 * - A `commondir` or a `.git` file is judged by where it points: a git dir it leads to inside
 *   the writable roots is guarded as the repository's own.
 * Every file is opened with no link followed below its root (no-follow.ts): a link where a
 * file was expected is removed, never followed.
 */
export interface GitProtection {
  /** `.git` folders bound onto themselves, writable. */
  pin: string[];
  /** Bound read-only (after the pins). */
  readOnly: string[];
}

/** What a command's disarm reports: one setting (or hook) it had planted. */
export interface GitDisarmed {
  repository: string;
  key: string;
  value: string;
  /** The exact command that puts it back, for the person. */
  restore: string;
}

/** Folders below a root not searched for nested repositories: large, and never a project's own repository. */
const SKIP = new Set(["node_modules", ".git", ".cache", "target", "dist", "build", "vendor", ".venv", "__pycache__"]);
/** More folders than this below the roots are not searched (a home folder as a root). */
const MAX_FOLDERS = 20_000;
/** Hooks larger than this are not kept to be put back (they lose their execute bits instead). */
const MAX_HOOK_BYTES = 1024 * 1024;
const CONFIG_FILES = ["config", "config.worktree"];

export function gitProtection(roots: string[]): GitProtection {
  const found: GitProtection = { pin: [], readOnly: [] };
  for (const git of repositories(roots)) {
    if (git.file) {
      found.readOnly.push(git.path);
      continue;
    }
    found.pin.push(git.path);
    for (const gitDir of git.gitDirs) {
      const hooks = join(gitDir, "hooks");
      if (!lstat(hooks) && lstat(join(gitDir, "HEAD"))?.isFile()) {
        // An empty hooks folder to hold read-only, so none can be made.
        const root = rootOf(roots, hooks);
        if (root) makeFolderBelow(root, hooks);
      }
      if (lstat(hooks)?.isDirectory()) found.readOnly.push(hooks);
      if (lstat(join(gitDir, "commondir"))?.isFile()) found.readOnly.push(join(gitDir, "commondir"));
    }
  }
  return found;
}

type Repository = { path: string; file: boolean; gitDirs: string[] };

/**
 * Every `.git` below the roots (any depth, MAX_FOLDERS at most): a folder, with its git dirs
 * (itself, its submodules' and worktrees', and where a `commondir` leads), or a file (a
 * worktree's or submodule's link) with the git dir it leads to. A walk kept under a watch
 * (keepWalk) serves while the watch sees no change; otherwise within one turn of the event
 * loop the walk is made once.
 */
function repositories(roots: string[]): Repository[] {
  const kept = keptWalks.get(roots);
  if (kept?.stillTrue()) return kept.found;
  if (lastWalk?.roots === roots) return lastWalk.found;
  const { found } = walk(roots);
  if (!lastWalk) setImmediate(() => (lastWalk = null));
  lastWalk = { roots, found };
  return found;
}
let lastWalk: { roots: string[]; found: Repository[] } | null = null;
const keptWalks = new WeakMap<string[], { found: Repository[]; stillTrue: () => boolean }>();

/** The repositories under `roots`, and every folder whose entries were looked at. */
function walk(roots: string[]): { found: Repository[]; folders: string[] } {
  const found: Repository[] = [];
  const folders: string[] = [];
  const queue = [...roots];
  while (queue.length && folders.length < MAX_FOLDERS) {
    const dir = queue.shift()!;
    folders.push(dir);
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.name === ".git") {
        const path = join(dir, e.name);
        if (e.isFile()) found.push({ path, file: true, gitDirs: linkedGitDir(roots, path) });
        else if (e.isDirectory()) found.push({ path, file: false, gitDirs: gitDirsOf(roots, path) });
        else if (e.isSymbolicLink()) found.push({ path, file: true, gitDirs: symlinkedGitDir(roots, path) }); // git follows it
      } else if (e.isDirectory() && !SKIP.has(e.name)) queue.push(join(dir, e.name));
    }
  }
  return { found, folders };
}

/** A repository's git dirs: itself, its submodules' (nested too), its worktrees', and where their `commondir` leads inside the roots. */
function gitDirsOf(roots: string[], git: string): string[] {
  const dirs = new Set<string>();
  const add = (dir: string, depth: number) => {
    if (dirs.has(dir) || depth > 4) return;
    dirs.add(dir);
    for (const holder of ["modules", "worktrees"]) for (const sub of foldersIn(join(dir, holder))) add(sub, depth + 1);
    const common = pointer(roots, join(dir, "commondir"), dir);
    if (common) add(common, depth + 1);
  };
  add(git, 0);
  return [...dirs];
}

/** The git dir a `.git` file leads to, when it lies inside the roots. */
function linkedGitDir(roots: string[], dotGit: string): string[] {
  const target = pointer(roots, dotGit, dirname(dotGit), /^gitdir:\s*/);
  return target ? gitDirsOf(roots, target) : [];
}

/** The git dir a `.git` link leads to, when it lies inside the roots. */
function symlinkedGitDir(roots: string[], dotGit: string): string[] {
  try {
    const target = realpathSync(dotGit);
    return rootOf(roots, target) && lstat(target)?.isDirectory() ? gitDirsOf(roots, target) : [];
  } catch {
    return [];
  }
}

/** Where a one-line pointer file (`commondir`, a `.git` file) leads, relative to `base`, if that is a folder below a root. */
function pointer(roots: string[], file: string, base: string, prefix?: RegExp): string | null {
  const root = rootOf(roots, file);
  if (!root) return null;
  const text = readBelow(root, file, 4096);
  if (text === null) return null;
  const target = resolve(base, text.toString("utf8").trim().replace(prefix ?? /^/, ""));
  return rootOf(roots, target) && lstat(target)?.isDirectory() ? target : null;
}

/**
 * A fresh walk of `roots`, with the folder entries it depends on (runtime/containment/entry-watch.ts):
 * every folder walked (a `.git` or folder made or removed there), and the control files of
 * each repository. `keep` then keeps the walk for as long as the watch on those entries,
 * started before the walk, says nothing changed.
 */
export function gitWatchPoints(roots: string[]): { points: WatchPoint[]; keep: (stillTrue: () => boolean) => void } {
  const { found, folders } = walk(roots);
  const points: WatchPoint[] = folders.map((dir) => ({ dir, folders: true, names: [".git"] }));
  for (const git of found) {
    for (const gitDir of git.gitDirs) {
      points.push({ dir: gitDir, names: ["hooks", "commondir", "HEAD", "modules", "worktrees", ...CONFIG_FILES] });
      for (const holder of ["modules", "worktrees"]) if (lstat(join(gitDir, holder))?.isDirectory()) points.push({ dir: join(gitDir, holder), folders: true });
    }
  }
  return { points, keep: (stillTrue) => keptWalks.set(roots, { found, stillTrue }) };
}

/** Every git dir below the roots (the watch on changes uses them: plant-watch.ts). */
export function gitDirs(roots: string[]): string[] {
  return [...new Set(repositories(roots).flatMap((r) => r.gitDirs))];
}

/**
 * The state of git's control files when a command starts, to tell afterwards what it
 * changed: each file's identity, the program settings of each config, and (Landlock) each
 * hook's bytes to put back.
 */
export type GitState = Map<string, FileState>;
interface FileState {
  identity: string;
  programs?: Set<string>;
  hook?: { bytes: Buffer; mode: number } | null;
}

/** Every config and hook of the repositories under `policy`'s workspace roots, as it is now. */
export function gitState(policy: SandboxPolicy, level: SandboxLevel): GitState {
  const state: GitState = new Map();
  const roots = policy.workspaceRoots;
  for (const git of repositories(roots)) {
    for (const gitDir of git.gitDirs) {
      const root = rootOf(roots, gitDir);
      if (!root) continue;
      for (const name of CONFIG_FILES) recordConfig(state, root, join(gitDir, name));
      const hooks = join(gitDir, "hooks");
      const st = lstat(hooks);
      // A link in place of the hooks folder: git would run what is in the folder it leads to.
      if (st?.isSymbolicLink()) state.set(hooks, { identity: `link:${st.ino}:${st.ctimeMs}` });
      else if (st?.isDirectory()) for (const hook of list(hooks)) if (!hook.endsWith(".sample")) recordHook(state, root, join(hooks, hook), level === "landlock");
    }
  }
  return state;
}

/**
 * Disarms what a command planted in git's control files since `before` (see above); returns
 * what it disarmed. Safe to run while the command still runs and again after.
 */
export function disarmGit(policy: SandboxPolicy, level: SandboxLevel, before: GitState): GitDisarmed[] {
  const disarmed: GitDisarmed[] = [];
  const roots = policy.workspaceRoots;
  const now = gitState(policy, "namespaces");
  for (const [path, state] of now) {
    const was = before.get(path);
    if (was?.identity === state.identity) continue;
    const root = rootOf(roots, path);
    if (!root) continue;
    if (path.endsWith("/hooks")) {
      if (removeBelow(root, path)) disarmed.push({ repository: repositoryOf(dirname(path)), key: "hooks", value: "a symbolic link in place of the hooks folder (removed)", restore: "" });
      continue;
    }
    const gitDir = path.includes("/hooks/") ? dirname(dirname(path)) : dirname(path);
    if (path.includes("/hooks/")) disarmed.push(...disarmHook(root, gitDir, path, was, level));
    else disarmed.push(...disarmConfig(root, gitDir, path, was?.programs ?? new Set()));
  }
  // A hook the command removed at the Landlock level is put back too.
  for (const [path, was] of before) {
    if (!was.hook || now.has(path)) continue;
    const root = rootOf(roots, path);
    if (root && writeHook(root, path, was.hook)) disarmed.push(hookReport(dirname(dirname(path)), path, "removed by the command; put back as it was"));
  }
  return disarmed;
}

function disarmConfig(root: string, gitDir: string, path: string, keep: Set<string>): GitDisarmed[] {
  let fd: number;
  try {
    fd = openBelow(root, path, constants.O_RDWR);
  } catch {
    // A link where the config was: git would read the file it leads to. The link goes.
    if (lstat(path)?.isSymbolicLink() && removeBelow(root, path)) return [{ repository: repositoryOf(gitDir), key: path.slice(gitDir.length + 1), value: "a symbolic link (removed)", restore: "" }];
    return [];
  }
  try {
    if (!fstatSync(fd).isFile()) return [];
    const text = readFileSync(fd).toString("utf8");
    const result = disarmConfigText(text, keep);
    if (!result) return [];
    const bytes = Buffer.from(result.text);
    ftruncateSync(fd, 0);
    writeSync(fd, bytes, 0, bytes.length, 0);
    return result.disarmed.map((entry) => ({ repository: repositoryOf(gitDir), key: entry.name, value: entry.value, restore: restoreLine(gitDir, path, entry) }));
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
}

function disarmHook(root: string, gitDir: string, path: string, was: FileState | undefined, level: SandboxLevel): GitDisarmed[] {
  const st = lstat(path);
  if (!st) return [];
  if (was?.hook && level === "landlock") {
    // The person's hook, changed by the command: put back as it was (a link in its place goes first).
    if (st.isSymbolicLink()) removeBelow(root, path);
    return writeHook(root, path, was.hook) ? [hookReport(gitDir, path, "changed by the command; put back as it was")] : [];
  }
  if (st.isSymbolicLink()) return removeBelow(root, path) ? [hookReport(gitDir, path, "a symbolic link (removed)")] : [];
  if (!st.isFile() || (st.mode & 0o111) === 0) return [];
  try {
    const fd = openBelow(root, path, constants.O_RDONLY);
    try {
      fchmodSync(fd, fstatSync(fd).mode & 0o666); // git runs no hook that is not executable
    } finally {
      closeSync(fd);
    }
    return [hookReport(gitDir, path, "written by the command; made not executable")];
  } catch {
    return [];
  }
}

function hookReport(gitDir: string, path: string, value: string): GitDisarmed {
  const restore = value.includes("not executable") ? `chmod +x ${path}` : "";
  return { repository: repositoryOf(gitDir), key: `hooks/${path.slice(path.lastIndexOf("/") + 1)}`, value, restore };
}

function writeHook(root: string, path: string, hook: { bytes: Buffer; mode: number }): boolean {
  return writeBelow(root, path, hook.bytes, hook.mode & 0o777);
}

/** The folder a person runs git in for this git dir (a `.git`'s parent; other git dirs as they are). */
function repositoryOf(gitDir: string): string {
  return gitDir.endsWith("/.git") ? gitDir.slice(0, -5) : gitDir;
}

/** Parsed program settings, by path, while the file stays the same. */
const knownConfigs = new Map<string, { identity: string; programs: Set<string> }>();

function recordConfig(state: GitState, root: string, path: string): void {
  const id = identity(path);
  if (!id) return;
  let known = knownConfigs.get(path);
  if (known?.identity !== id) {
    const text = readBelow(root, path, 4 * 1024 * 1024);
    known = { identity: id, programs: text ? programSettings(text.toString("utf8")) : new Set() };
    knownConfigs.set(path, known);
  }
  state.set(path, { identity: id, programs: known.programs });
}

function recordHook(state: GitState, root: string, path: string, keepBytes: boolean): void {
  const id = identity(path);
  if (!id) return;
  const st = lstat(path);
  const bytes = keepBytes && st?.isFile() && st.size <= MAX_HOOK_BYTES ? readBelow(root, path, MAX_HOOK_BYTES) : null;
  state.set(path, { identity: id, hook: bytes && st ? { bytes, mode: st.mode } : null });
}

function identity(path: string): string | null {
  const st = lstat(path);
  return st ? `${st.ino}:${st.mtimeMs}:${st.ctimeMs}:${st.mode}:${st.size}` : null;
}

function lstat(path: string) {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null; // ENOTDIR and the like
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

