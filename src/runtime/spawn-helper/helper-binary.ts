import { chmodSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
// The static helper build.ts compiles for this platform, embedded in the binary.
import embedded from "../../../build/agent-shell-helper" with { type: "file" };

/**
 * Where the spawn helper (agent-shell-helper.c) runs from: a copy in the state dir, named
 * after its content, written atomically (a temporary name, then a rename), so servers starting
 * together never run a half-written copy. The state dir is the user's own (0700) and hidden
 * from every sandbox; still, the helper runs with every privilege the server has before it
 * enters a sandbox, so it is never run by path (SPEC §26): it runs through the server's open
 * descriptor of a copy whose bytes were compared with the ones built in, and compared again
 * whenever that file's status (size, times) has changed since.
 */
let dir: string | null = null;
let installed: { path: string; fd: number; checked: string } | null = null;

/** The state dir the helper is kept in (the server's; set before the first spawn). */
export function configureHelper(stateRoot: string): void {
  if (dir === stateRoot) return;
  dir = stateRoot;
  installed = null;
}

/**
 * How the helper is run: `file` is the server's descriptor of the checked copy, `argv0` the
 * copy's path, as `ps` shows it (installed on first use).
 */
export function helperExec(): { file: string; argv0: string } {
  const { fd, path } = install();
  return { file: `/proc/${process.pid}/fd/${fd}`, argv0: path };
}

/** An open read-only fd of the helper, which bwrap runs as a kept sandbox's first process (`/proc/self/fd/N`). */
export function helperFd(): number {
  return install().fd;
}

function install(): { path: string; fd: number } {
  if (installed && status(installed.fd) === installed.checked) return installed;
  if (installed) closeSync(installed.fd);
  installed = null;
  const bytes = builtIn();
  const folder = join(dir ?? defaultDir(), "bin");
  const path = join(folder, `agent-shell-helper-${Bun.hash(bytes).toString(16)}`);
  let fd = openIfSame(path, bytes);
  if (fd === null) {
    // Missing, or not the bytes built in (changed or replaced): written anew.
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, bytes, { mode: 0o500 });
    chmodSync(temporary, 0o500);
    renameSync(temporary, path);
    fd = openIfSame(path, bytes);
    if (fd === null) throw new Error(`the spawn helper at ${path} changed as it was written`);
  }
  installed = { path, fd, checked: status(fd) };
  return installed;
}

let embeddedBytes: Buffer | null = null;
function builtIn(): Buffer {
  return (embeddedBytes ??= readFileSync(embedded));
}

/** `path` opened read-only if it holds exactly `bytes` (read through the descriptor kept). */
function openIfSame(path: string, bytes: Buffer): number | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    if (fstatSync(fd).size === bytes.length && readFileSync(fd).equals(bytes)) return fd;
  } catch {}
  closeSync(fd);
  return null;
}

/** What changes when a file's bytes or mode change (ctime cannot be set back by its writer). */
function status(fd: number): string {
  const st = fstatSync(fd);
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.mode}`;
}

function defaultDir(): string {
  return join(process.env.HOME ?? "/tmp", ".local/state/agent-shell");
}
