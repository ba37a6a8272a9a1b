import { chmodSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
// The static helper build.ts compiles for this platform, embedded in the binary.
import embedded from "../../../build/agent-shell-helper" with { type: "file" };

/**
 * Where the spawn helper (agent-shell-helper.c) runs from: a copy in the state dir, named
 * after its content. The state dir is the user's own (0700) and hidden from every sandbox, so
 * no command can replace the program that later enters a sandbox from outside. Written once
 * per build, atomically (a temporary name, then a rename), so servers starting together never
 * run a half-written copy.
 */
let dir: string | null = null;
let installed: { path: string; fd: number } | null = null;

/** The state dir the helper is kept in (the server's; set before the first spawn). */
export function configureHelper(stateRoot: string): void {
  if (dir === stateRoot) return;
  dir = stateRoot;
  installed = null;
}

/** The helper's path, installed on first use. */
export function helperPath(): string {
  return install().path;
}

/** An open read-only fd of the helper, which bwrap runs as a kept sandbox's first process (`/proc/self/fd/N`). */
export function helperFd(): number {
  return install().fd;
}

function install(): { path: string; fd: number } {
  if (installed) return installed;
  const bytes = readFileSync(embedded);
  const folder = join(dir ?? defaultDir(), "bin");
  const path = join(folder, `agent-shell-helper-${Bun.hash(bytes).toString(16)}`);
  if (!existsSync(path)) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, bytes, { mode: 0o500 });
    chmodSync(temporary, 0o500);
    renameSync(temporary, path);
  }
  installed = { path, fd: openSync(path, "r") };
  return installed;
}

function defaultDir(): string {
  return join(process.env.HOME ?? "/tmp", ".local/state/agent-shell");
}
