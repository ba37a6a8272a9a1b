import { closeSync, writeSync } from "node:fs";
import { CWD_REPLACED_MESSAGE, hiddenPaths } from "../sandbox/bwrap.ts";
import type { SandboxRun } from "../sandbox/setup.ts";
import { spawnBwrap } from "./local-process.ts";
import { createPipe } from "./pipes.ts";
import { signalGroup } from "./process-group.ts";
import type { SpawnSpec } from "./types.ts";
import { watchdog } from "./watchdog.ts";

/**
 * Sandboxes built ahead of their command. bwrap needs 3–6 ms to build the namespaces and
 * mounts of a sandbox, several times what `true` itself costs, and nothing in that work
 * depends on the command. So for each policy one sandbox waits, built: bwrap has started a
 * launcher (bash) that sources its command from fd 3, a pipe nothing is written to until a
 * call claims it. The claim writes a short script (enter and check the working directory,
 * set the environment, exec the command) and closes the pipe; the next sandbox is then
 * built in the background. Containment is unchanged: every command still gets a fresh
 * sandbox (and pid namespace) of its own, only built earlier.
 *
 * Commands that cannot be expressed exactly this way start the usual way: an argv (no
 * shell), a terminal, a working directory under a hidden path, an environment variable
 * name bash cannot export, or a script too large for one pipe write.
 */

interface Warm {
  run: SandboxRun;
  proc: Bun.Subprocess;
  /** What the sandbox hides (it was built for these; a path created since is not covered). */
  hidden: string;
  request: number;
  stdin: number;
  stdout: number;
  stderr: number;
}

export interface ClaimedSandbox {
  proc: Bun.Subprocess;
  stdout: number;
  stderr: number;
  /** The write end of the command's stdin; null when the spec has none (the command reads /dev/null). */
  stdin: number | null;
}

/**
 * Sandboxes kept built per policy, most recently used policy last. Two, so back-to-back
 * calls find one ready while the next is built (a build is mostly waiting in the kernel,
 * so builds overlap well); a few policies at most are in use at once.
 */
const PER_POLICY = 2;
const MAX_POLICIES = 4;
const warm = new Map<SandboxRun, Warm[]>();
const scheduled = new Set<SandboxRun>();
/** Set once the server closes: nothing is built after that. */
let closed = false;

/** The launcher: runs what the claim writes to fd 3; a pipe closed empty (the host died) ends it. */
const LAUNCHER = ["bash", "--noprofile", "--norc", "-c", ". /dev/fd/3; exit 125"];
/** A pipe holds 64 KiB: a larger script would block the claim until the launcher reads. */
const MAX_SCRIPT = 60 * 1024;
const EXPORTABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A sandbox built for `spec`'s policy with `spec`'s command started in it, or null (start it the usual way). */
export function claimWarmSandbox(spec: SpawnSpec): ClaimedSandbox | null {
  const run = spec.sandbox;
  if (!run?.wrapAhead || spec.argv || spec.tty) return null;
  const ready = warm.get(run) ?? [];
  warm.delete(run);
  warm.set(run, ready); // most recently used last
  const found = ready.shift();
  if (!found) {
    schedule(run);
    return null;
  }
  const script = launchScript(spec);
  if (script === null || !running(found.proc) || signature(run, spec.cwd) !== found.hidden) {
    discard(found);
    schedule(run);
    return null;
  }
  // The replacement is built once this command has ended: a build running beside the
  // command slows both (the spare one serves a call that comes meanwhile).
  void found.proc.exited.then(() => schedule(run));
  try {
    writeSync(found.request, script);
  } catch {
    discard(found);
    return null;
  } finally {
    closeQuietly(found.request);
  }
  let stdin: number | null = found.stdin;
  if (spec.stdin === null) {
    closeQuietly(found.stdin);
    stdin = null;
  }
  return { proc: found.proc, stdout: found.stdout, stderr: found.stderr, stdin };
}

/** Kills every sandbox waiting for a command (the server is closing). */
export function closeWarmSandboxes(): void {
  closed = true;
  for (const list of warm.values()) for (const w of list) discard(w);
  warm.clear();
  scheduled.clear();
}

process.once("exit", closeWarmSandboxes);

function schedule(run: SandboxRun): void {
  if (closed || scheduled.has(run)) return;
  scheduled.add(run);
  setImmediate(() => {
    if (!scheduled.delete(run)) return;
    const ready = warm.get(run);
    if (!ready) return;
    try {
      while (ready.length < PER_POLICY) ready.push(build(run));
    } catch {
      // bwrap could not start: calls keep starting the usual way
    }
    if (warm.size > MAX_POLICIES) {
      const [oldest, list] = warm.entries().next().value!;
      warm.delete(oldest);
      for (const w of list) discard(w);
    }
  });
}

function build(run: SandboxRun): Warm {
  const opened: number[] = [];
  try {
    const [stdinR, stdinW] = createPipe();
    const [outR, outW] = createPipe();
    const [errR, errW] = createPipe();
    const [reqR, reqW] = createPipe();
    opened.push(stdinR, stdinW, outR, outW, errR, errW, reqR, reqW);
    const hidden = signature(run, "/");
    const proc = spawnBwrap(run.wrapAhead!(LAUNCHER, 4), { stdin: stdinR, stdout: outW, stderr: errW }, reqR, "/");
    watchdog().track(proc.pid);
    for (const fd of [stdinR, outW, errW, reqR]) closeQuietly(fd); // the child has its copies
    return { run, proc, hidden, request: reqW, stdin: stdinW, stdout: outR, stderr: errR };
  } catch (e) {
    for (const fd of opened) closeQuietly(fd);
    throw e;
  }
}

function discard(w: Warm): void {
  signalGroup(w.proc.pid, "SIGKILL");
  for (const fd of [w.request, w.stdin, w.stdout, w.stderr]) closeQuietly(fd);
  void w.proc.exited.then(() => watchdog().untrack(w.proc.pid));
}

function signature(run: SandboxRun, cwd: string): string {
  return JSON.stringify(hiddenPaths(run.policy, cwd));
}

function running(proc: Bun.Subprocess): boolean {
  return proc.exitCode === null && proc.signalCode === null;
}

/**
 * What the launcher sources: the environment exactly as a direct `bash -c` would get it
 * (bash's `exec` lowers SHLVL by one, so it is raised by one first; OLDPWD only if given).
 * The directory check is the one the direct start makes: the path, all symlinks resolved,
 * must still be the validated (canonical) one.
 */
function launchScript(spec: SpawnSpec): string | null {
  const lines = [
    "exec 3<&- 4>&-",
    `cd -P -- ${quote(spec.cwd)} 2>/dev/null && [ "$PWD" = ${quote(spec.cwd)} ] || { printf '%s\\n' ${quote(CWD_REPLACED_MESSAGE)} >&2; exit 126; }`,
  ];
  if (spec.stdin === null) lines.push("exec 0</dev/null");
  for (const [name, value] of Object.entries(spec.env)) {
    if (!EXPORTABLE.test(name)) return null;
    if (name !== "SHLVL") lines.push(`export ${quote(`${name}=${value}`)}`);
  }
  if (spec.env.OLDPWD === undefined) lines.push("export -n OLDPWD");
  const level = spec.env.SHLVL;
  lines.push(level !== undefined && /^\d{1,6}$/.test(level) ? `export SHLVL=${Number(level) + 1}` : "export -n SHLVL");
  lines.push(`exec bash -c ${quote(spec.command)}`);
  const script = lines.join("\n") + "\n";
  return Buffer.byteLength(script) <= MAX_SCRIPT ? script : null;
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {}
}
