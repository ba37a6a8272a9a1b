import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { controlFileNames, controlFilesUnder } from "./control-files.ts";
import { readBelow, removeBelow, rootOf, writeBelow } from "../paths/no-follow.ts";
import type { SandboxLevel, SandboxPolicy } from "../policy.ts";

/**
 * The control files (control-files.ts) that mounts cannot keep read-only, put back as they
 * were: one a command made where there was none (every level), and at the Landlock level one
 * it changed or removed. The state is taken before the command starts; files are read and
 * written with no link followed below their root.
 */
export type ControlState = Map<string, { bytes: Buffer; mode: number } | null>;

/** Larger control files are not kept (a shell rc is a few KiB). */
const MAX_BYTES = 1024 * 1024;

export function controlState(policy: SandboxPolicy, level: SandboxLevel): ControlState {
  const state: ControlState = new Map();
  const roots = policy.workspaceRoots;
  if (roots.length === 0) return state;
  const home = process.env.HOME ?? "/nonexistent";
  for (const path of controlFileNames(home)) if (rootOf(roots, path) && !lstat(path)) state.set(path, null);
  if (level !== "landlock") return state;
  for (const path of controlFilesUnder(roots, home)) {
    const st = lstat(path);
    const files = st?.isDirectory() ? list(path).map((name) => join(path, name)) : [path];
    for (const file of files) {
      const root = rootOf(roots, file);
      const bytes = root ? readBelow(root, file, MAX_BYTES) : null;
      if (bytes) state.set(file, { bytes, mode: lstat(file)!.mode & 0o7777 });
    }
  }
  return state;
}

/** Puts back what changed since `before`; returns the paths put back (or removed). */
export function restoreControlFiles(policy: SandboxPolicy, before: ControlState): string[] {
  const done: string[] = [];
  for (const [path, was] of before) {
    const root = rootOf(policy.workspaceRoots, path);
    if (!root) continue;
    const st = lstat(path);
    if (was === null) {
      if (st && !st.isDirectory() && removeBelow(root, path)) done.push(path);
      continue;
    }
    if (st?.isFile() && (st.mode & 0o7777) === was.mode && same(root, path, was.bytes)) continue;
    if (st && !st.isFile()) removeBelow(root, path);
    if (writeBelow(root, path, was.bytes, was.mode)) done.push(path);
  }
  return done;
}

function same(root: string, path: string, bytes: Buffer): boolean {
  const now = readBelow(root, path, MAX_BYTES);
  return now !== null && now.equals(bytes);
}

function lstat(path: string) {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => lstat(join(dir, name))?.isFile());
  } catch {
    return [];
  }
}
