import { realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

export type PathCheck =
  | { ok: true; path: string }
  | { ok: false; code: "ACCESS_DENIED" | "NOT_FOUND" | "INVALID_ARGUMENT"; message: string };

/** Canonical form of an allowed root (symlinks followed when it exists). */
export function canonicalRoot(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function inside(path: string, root: string): boolean {
  if (path === root) return true;
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith(".." + sep) && rel !== ".." && !isAbsolute(rel);
}

/** Resolve as far as the path exists with symlinks followed; the rest is lexical. */
function canonicalize(path: string): { path: string; exists: boolean } {
  try {
    return { path: realpathSync(path), exists: true };
  } catch {
    const parent = dirname(path);
    if (parent === path) return { path, exists: false };
    const base = path.slice(parent.length).replace(/^\/+/, "");
    return { path: resolve(canonicalize(parent).path, base), exists: false };
  }
}

/**
 * Validate a working directory: inside an allowed root (after following symlinks),
 * existing, and a directory. Relative paths resolve against `cwd`.
 */
export function checkWorkingDirectory(raw: string, cwd: string, allowedRoots: readonly string[]): PathCheck {
  const { path, exists } = canonicalize(resolve(cwd, raw));
  if (!allowedRoots.some((root) => inside(path, root))) {
    return {
      ok: false,
      code: "ACCESS_DENIED",
      message: `working_directory '${raw}' (${path}) is outside allowed paths (${allowedRoots.join(", ")}); add it with --allow DIR or the allowed_paths config key`,
    };
  }
  if (!exists) {
    return { ok: false, code: "NOT_FOUND", message: `working_directory '${raw}' does not exist (${path})` };
  }
  if (!statSync(path).isDirectory()) {
    return { ok: false, code: "INVALID_ARGUMENT", message: `working_directory '${raw}' is not a directory (${path})` };
  }
  return { ok: true, path };
}
