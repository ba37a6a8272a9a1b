import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { foldersIn } from "../folders.ts";
import type { WatchPoint } from "./watch-point.ts";

/**
 * git runs nothing a sandboxed command wrote (SPEC §11, §20): in each repository under the
 * writable roots (at a root, or in a folder right below one), what makes git run a program —
 * `.git/hooks`, `.git/config`, a `commondir` or `config.worktree` redirect, the same in
 * submodules and worktrees — is bound read-only, and `.git` itself is pinned (bound onto
 * itself: a mount point cannot be renamed or removed), so it cannot be moved aside and made
 * anew. A `.git` file (a worktree or submodule's link) is bound read-only whole. Looked up at
 * each sandbox build, so a repository made after the server started is covered from the next
 * command on. The namespaces level only: Landlock cannot carve read-only holes in a writable tree.
 */
export interface GitProtection {
  /** `.git` folders bound onto themselves, writable. */
  pin: string[];
  /** Bound read-only (after the pins). */
  readOnly: string[];
}

const CONTROL_FILES = ["hooks", "config", "commondir", "config.worktree"];
/** Folders below a root not searched for nested repositories: large, and never a project's own repository. */
const SKIP = new Set(["node_modules", ".git", ".cache", "target", "dist", "build", "vendor"]);

export function gitProtection(roots: string[]): GitProtection {
  const found: GitProtection = { pin: [], readOnly: [] };
  for (const git of repositories(roots)) {
    if (git.file) {
      found.readOnly.push(git.path);
      continue;
    }
    found.pin.push(git.path);
    const hooks = join(git.path, "hooks");
    if (!existsSync(hooks) && existsSync(join(git.path, "HEAD"))) {
      try {
        mkdirSync(hooks); // an empty hooks folder to hold read-only, so none can be made
      } catch {}
    }
    for (const gitDir of git.gitDirs) {
      for (const name of CONTROL_FILES) if (lstat(join(gitDir, name))) found.readOnly.push(join(gitDir, name));
    }
  }
  return found;
}

type Repository = { path: string; file: boolean; gitDirs: string[] };

/**
 * Every `.git` at a root or in a folder right below one: a folder (with its own git dirs:
 * itself, its submodules' and its worktrees'), or a file (a worktree's or submodule's link).
 * A walk kept under a watch (keepWalk) serves while the watch sees no change; otherwise a
 * command's start looks twice (what its sandbox covers, and the state to compare with at its
 * end), and within one turn of the event loop the walk is made once.
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

/** The repositories under `roots`, and the subfolders whose `.git` was looked at. */
function walk(roots: string[]): { found: Repository[]; below: string[] } {
  const found: Repository[] = [];
  const below: string[] = [];
  for (const root of roots) {
    const folders = subfolders(root).map((name) => join(root, name));
    below.push(...folders);
    for (const dir of [root, ...folders]) {
      const path = join(dir, ".git");
      const st = lstat(path);
      if (st?.isFile()) found.push({ path, file: true, gitDirs: [] });
      else if (st?.isDirectory()) found.push({ path, file: false, gitDirs: [path, ...foldersIn(join(path, "modules")), ...foldersIn(join(path, "worktrees"))] });
    }
  }
  return { found, below };
}

/**
 * A fresh walk of `roots`, with the folder entries it depends on (runtime/entry-watch.ts): a
 * folder made, removed or renamed at a root, a `.git` at a root or below one, the control
 * files, submodules and worktrees of each repository. `keep` then keeps the walk for as long
 * as the watch on those entries, started before the walk, says nothing changed.
 */
export function gitWatchPoints(roots: string[]): { points: WatchPoint[]; keep: (stillTrue: () => boolean) => void } {
  const { found, below } = walk(roots);
  const points: WatchPoint[] = [...roots.map((dir) => ({ dir, names: [".git"], folders: true })), ...below.map((dir) => ({ dir, names: [".git"] }))];
  for (const git of found) {
    if (git.file) continue;
    points.push({ dir: git.path, names: [...CONTROL_FILES, "HEAD", "modules", "worktrees"] });
    for (const holder of ["modules", "worktrees"]) if (lstat(join(git.path, holder))?.isDirectory()) points.push({ dir: join(git.path, holder), folders: true });
    for (const gitDir of git.gitDirs.slice(1)) points.push({ dir: gitDir, names: CONTROL_FILES });
  }
  return { points, keep: (stillTrue) => keptWalks.set(roots, { found, stillTrue }) };
}

function subfolders(root: string): string[] {
  try {
    return readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !SKIP.has(e.name))
      .map((e) => e.name);
  } catch {
    return [];
  }
}

function lstat(path: string) {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null; // ENOTDIR and the like
  }
}

/**
 * What the mounts cannot hold — a `commondir` made inside a pinned `.git`, a repository
 * made (or, at the Landlock level, changed) by the command — is undone when the command
 * ends: a hook it wrote or changed loses its execute bits (git runs no hook that is not
 * executable), a config it wrote has the keys that run programs commented out, a
 * `commondir` it made is renamed. `before` is the state when the sandbox was entered.
 */
export type GitState = Map<string, string>;

/** Every git control file of the repositories under the roots (a root and one level below), with its identity. */
export function gitState(roots: string[]): GitState {
  const state: GitState = new Map();
  for (const git of repositories(roots)) {
    for (const gitDir of git.gitDirs) {
      for (const name of ["config", "commondir", "config.worktree"]) record(state, join(gitDir, name));
      for (const hook of list(join(gitDir, "hooks"))) if (!hook.endsWith(".sample")) record(state, join(gitDir, "hooks", hook));
    }
  }
  return state;
}

/** Undoes what a command did to git's control files since `before` (see above); returns the paths it changed. */
export function undoGitPlants(roots: string[], before: GitState): string[] {
  const undone: string[] = [];
  for (const [path, identity] of gitState(roots)) {
    if (before.get(path) === identity) continue;
    try {
      if (path.endsWith("/commondir")) renameSync(path, `${path}.blocked-by-agent-shell`);
      else if (path.includes("/hooks/")) chmodSync(path, lstatSync(path).mode & 0o666);
      else disarmConfig(path);
      undone.push(path);
    } catch {}
  }
  return undone;
}

/** Keys whose value git runs as a program (in any section), and include directives. */
const RUNS_PROGRAM = /^\s*(fsmonitor|hookspath|sshcommand|pager|editor|askpass|gitproxy|textconv|command|driver|helper|clean|smudge|process|program|packobjectshook|alternaterefscommand|path)\s*=/i;

function disarmConfig(path: string): void {
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n");
  let changed = false;
  const out = lines.map((line) => {
    if (!RUNS_PROGRAM.test(line) && !/^\s*\[\s*include/i.test(line)) return line;
    changed = true;
    return `# disabled by agent-shell (written inside its sandbox): ${line}`;
  });
  if (changed) writeFileSync(path, out.join("\n"));
}

function record(state: GitState, path: string): void {
  const st = lstat(path);
  if (st) state.set(path, `${st.ino}:${st.mtimeMs}:${st.mode}:${st.size}`);
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
