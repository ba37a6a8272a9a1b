import { realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { expandHome } from "../expand-home.ts";
import { CodedError } from "../errors.ts";

/** Canonical form of an allowed root (symlinks followed when it exists). */
export function canonicalRoot(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The allowed roots: the cwd, plus each extra path (`~` expanded, relative to the cwd), canonical. */
export function allowedRoots(cwd: string, extra: readonly string[]): string[] {
  return [cwd, ...extra.map((p) => canonicalRoot(resolve(cwd, expandHome(p))))];
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
 * existing, and a directory. Relative paths resolve against `cwd`. Returns the canonical
 * path; throws ACCESS_DENIED, NOT_FOUND or INVALID_ARGUMENT (with `context`).
 */
export function checkWorkingDirectory(raw: string, cwd: string, roots: readonly string[], context: Record<string, unknown> = {}): string {
  const { path, exists } = canonicalize(resolve(cwd, raw));
  if (!roots.some((root) => inside(path, root))) {
    throw new CodedError(
      "ACCESS_DENIED",
      `working_directory '${raw}' (${path}) is outside allowed paths (${roots.join(", ")}); add it with --allow DIR or the allowed_paths config key`,
      context,
    );
  }
  if (!exists) throw new CodedError("NOT_FOUND", `working_directory '${raw}' does not exist (${path})`, context);
  if (!statSync(path).isDirectory()) throw new CodedError("INVALID_ARGUMENT", `working_directory '${raw}' is not a directory (${path})`, context);
  return path;
}
