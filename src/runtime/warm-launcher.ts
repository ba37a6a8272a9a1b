import type { SandboxRun } from "../sandbox/setup.ts";
import { madeInNow, planFor, releaseContainment, undoGitPlantsAtExit, type Started } from "./local-process.ts";
import { closeQuietly, createPipe } from "./pipes.ts";
import { signalGroup, stillRunning } from "./process-group.ts";
import { sendRequest, startHelper } from "./spawn-helper/start.ts";
import type { SpawnSpec } from "./types.ts";
import { watchdog } from "./watchdog.ts";

/**
 * Helpers started ahead of their command. A start through the helper costs a spawn of it, a
 * fork and the exec of the command; one started ahead has done all but the exec: it is in
 * its task cgroup and process limit, inside its kept sandbox (or Landlock), restricted, and
 * waits for its request on a pipe. A call claims it by writing the request (working
 * directory, argv, environment), so the call pays for the exec alone. The next one is started
 * once the claimed command has ended (one starting beside a command slows both on two cores;
 * the spare one serves a call that comes meanwhile). Containment is unchanged: each command
 * still gets a task cgroup and process limit of its own, only made earlier.
 *
 * Terminal commands start the usual way: their terminal is made with the process.
 */

/** Unsandboxed commands: one more kind, kept like a policy's. */
const UNSANDBOXED = Symbol("unsandboxed");
type Kind = SandboxRun | typeof UNSANDBOXED;

interface Warm {
  kind: Kind;
  started: Started;
  /** What it was made in (its kept sandbox, or its Landlock ruleset): a claim compares it with now. */
  madeIn: unknown;
  request: number;
  stdin: number;
  stdout: number;
  stderr: number;
}

export interface ClaimedLauncher {
  started: Started;
  stdout: number;
  stderr: number;
  /** The write end of the command's stdin; null when the spec has none (the command reads /dev/null). */
  stdin: number | null;
}

/**
 * Launchers kept per kind, most recently used kind last. Two, so back-to-back calls find
 * one ready while the next is started; a few kinds at most are in use at once.
 */
const PER_KIND = 2;
const MAX_KINDS = 4;
const warm = new Map<Kind, Warm[]>();
const scheduled = new Set<Kind>();
/** Set once the server closes: nothing is started after that. */
let closed = false;

/**
 * How long after the claimed command's exit the next one starts: at once (a turn of the event
 * loop, after the exit's own work). Measured in-process back to back: with 3 ms a call found
 * none ready about one time in four; at once, every time.
 */
const START_DELAY_MS = 0;

/** A launcher made ready for `spec` with `spec`'s command started in it, or null (start it the usual way). */
export function claimWarmLauncher(spec: SpawnSpec): ClaimedLauncher | null {
  if (spec.tty) return null;
  const kind: Kind = spec.sandbox ?? UNSANDBOXED;
  const ready = warm.get(kind) ?? [];
  warm.delete(kind);
  warm.set(kind, ready); // most recently used last
  const found = ready.shift();
  if (!found) {
    schedule(kind);
    return null;
  }
  if (!stillRunning(found.started.proc) || found.madeIn !== madeInNow(kind === UNSANDBOXED ? null : kind, spec.cwd)) {
    discard(found);
    schedule(kind);
    return null;
  }
  void found.started.proc.exited.then(() => schedule(kind));
  if (kind !== UNSANDBOXED) undoGitPlantsAtExit(found.started.proc, kind); // its state before the command runs
  sendRequest(found.request, spec);
  let stdin: number | null = found.stdin;
  if (spec.stdin === null) {
    closeQuietly(found.stdin);
    stdin = null;
  }
  return { started: found.started, stdout: found.stdout, stderr: found.stderr, stdin };
}

/** Kills every launcher waiting for a command (the server is closing). */
export function closeWarmLaunchers(): void {
  closed = true;
  for (const list of warm.values()) for (const w of list) discard(w);
  warm.clear();
  scheduled.clear();
}

process.once("exit", closeWarmLaunchers);

function schedule(kind: Kind): void {
  if (closed || scheduled.has(kind)) return;
  scheduled.add(kind);
  setTimeout(() => {
    if (!scheduled.delete(kind)) return;
    const ready = warm.get(kind);
    if (!ready) return;
    void fill(kind, ready);
    if (warm.size > MAX_KINDS) {
      const [oldest, list] = warm.entries().next().value!;
      warm.delete(oldest);
      for (const w of list) discard(w);
    }
  }, START_DELAY_MS);
}

async function fill(kind: Kind, ready: Warm[]): Promise<void> {
  try {
    while (ready.length < PER_KIND && !closed) {
      const w = await start(kind);
      if (closed || warm.get(kind) !== ready) return discard(w);
      ready.push(w);
    }
  } catch {
    // could not start one: calls keep starting the usual way
  }
}

async function start(kind: Kind): Promise<Warm> {
  const run = kind === UNSANDBOXED ? null : kind;
  const { plan, containment, madeIn } = await planFor(run, "/", true);
  const opened: number[] = [];
  try {
    const [stdinR, stdinW] = createPipe();
    const [outR, outW] = createPipe();
    const [errR, errW] = createPipe();
    opened.push(stdinR, stdinW, outR, outW, errR, errW);
    const { proc, request } = startHelper(plan, { stdin: stdinR, stdout: outW, stderr: errW });
    watchdog().track(proc.pid);
    for (const fd of [stdinR, outW, errW]) closeQuietly(fd); // the child has its copies
    return { kind, started: { proc, containment }, madeIn, request, stdin: stdinW, stdout: outR, stderr: errR };
  } catch (e) {
    for (const fd of opened) closeQuietly(fd);
    releaseContainment(containment);
    throw e;
  }
}

function discard(w: Warm): void {
  closeQuietly(w.request); // an empty request: the helper ends without running anything
  signalGroup(w.started.proc.pid, "SIGKILL");
  w.started.containment.cgroup?.signal("SIGKILL");
  for (const fd of [w.stdin, w.stdout, w.stderr]) closeQuietly(fd);
  void w.started.proc.exited.then(() => {
    watchdog().untrack(w.started.proc.pid);
    releaseContainment(w.started.containment);
  });
}
