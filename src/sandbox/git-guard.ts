import { existsSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

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
  for (const root of roots) {
    protect(root, found);
    for (const name of subfolders(root)) protect(join(root, name), found);
  }
  return found;
}

function protect(dir: string, found: GitProtection): void {
  const git = join(dir, ".git");
  const st = lstat(git);
  if (!st) return;
  if (st.isFile()) return void found.readOnly.push(git);
  if (!st.isDirectory()) return;
  found.pin.push(git);
  const hooks = join(git, "hooks");
  if (!existsSync(hooks) && existsSync(join(git, "HEAD"))) {
    try {
      mkdirSync(hooks); // an empty hooks folder to hold read-only, so none can be made
    } catch {}
  }
  for (const gitDir of [git, ...children(join(git, "modules")), ...children(join(git, "worktrees"))]) {
    for (const name of CONTROL_FILES) if (lstat(join(gitDir, name))) found.readOnly.push(join(gitDir, name));
  }
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

function children(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

function lstat(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
