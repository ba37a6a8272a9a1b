import { constants, openSync } from "node:fs";
import type { SandboxRun } from "../../sandbox/setup.ts";
import type { Kept } from "../containment/kept-sandbox.ts";
import { gitPlantsUndo, madeInNow, newContainment, releaseContainment, restrictionsFor, type Started } from "./local-process.ts";
import { closeQuietly, createPipe } from "../kernel/pipes.ts";
import { encodeRequest } from "../spawn-helper/start.ts";
import { type ServedChild, Spawner } from "../spawn-helper/spawner.ts";
import type { SpawnSpec } from "../types.ts";

/**
 * Piped commands start through a spawner kept per sandbox (spawn-helper/spawner.ts): one per
 * kept sandbox view, Landlock ruleset, or none (unsandboxed), made on first use and kept while
 * what it was made in is current. Containment is unchanged: each command is born in a task
 * cgroup and process limit of its own (SPEC §14, §20). Where no task cgroup can be made (a
 * sandboxed command then needs a pid namespace of its own) and for terminals, commands start
 * through a helper each (local-process.ts spawnChild).
 */

export interface ServedStart {
  started: Started;
  stdout: number;
  stderr: number;
  /** The write end of the command's stdin; null when it reads /dev/null. */
  stdin: number | null;
}

const UNSANDBOXED = Symbol("unsandboxed");
/** Spawners by what they were made in (a Kept, a Landlock ruleset's text, or UNSANDBOXED), most recently used last. */
const spawners = new Map<unknown, Promise<Spawner>>();
/** Idle spawners beyond this many are ended, least recently used first. */
const MAX_SPAWNERS = 6;
/** How long a request waits for room in a busy spawner's socket before it starts another way. */
const ROOM_DEADLINE_MS = 5000;

/** Starts `spec` through its sandbox's spawner, or returns null: start it another way. */
export async function spawnServed(spec: SpawnSpec): Promise<ServedStart | null> {
  if (spec.tty) return null;
  const run = spec.sandbox ?? null;
  const containment = newContainment();
  if (!containment.cgroup) {
    releaseContainment(containment);
    return null;
  }
  const opened: number[] = [];
  const ours: number[] = [];
  let sent = false;
  let endGitGuard: (() => void) | undefined;
  try {
    const spawner = await spawnerFor(run, spec.cwd);
    if (!spawner) throw new Error("no spawner");
    const [outR, outW] = createPipe();
    const [errR, errW] = createPipe();
    opened.push(outW, errW);
    ours.push(outR, errR);
    let stdinR: number | null = null;
    let stdinW: number | null = null;
    if (spec.stdin !== null) {
      [stdinR, stdinW] = createPipe();
      opened.push(stdinR);
      ours.push(stdinW);
    }
    const cgroup = openSync(containment.cgroup.path, constants.O_RDONLY | constants.O_DIRECTORY);
    opened.push(cgroup);
    const pids = containment.limit ? openSync(containment.limit.tasksFile, constants.O_WRONLY) : null;
    if (pids !== null) opened.push(pids);
    endGitGuard = run ? gitPlantsUndo(spec) : undefined;
    const request = encodeRequest(spec);
    const fds = { stdout: outW, stderr: errW, cgroup, pids, stdin: stdinR };
    let starting = spawner.spawn(request, fds);
    // Its socket is full (a burst of starts): the request waits for room, up to ROOM_DEADLINE_MS.
    for (const deadline = performance.now() + ROOM_DEADLINE_MS; !starting && spawner.alive && !Spawner.tooLarge(request) && performance.now() < deadline; ) {
      await spawner.room();
      starting = spawner.spawn(request, fds);
    }
    // The spawner has its own copies now (or never will): ours go, or EOF never comes.
    opened.splice(0).forEach(closeQuietly);
    if (!starting) throw new Error("not sent");
    sent = true;
    const child: ServedChild = await starting;
    return { started: { proc: child, containment, watched: false, atTaskEnd: endGitGuard }, stdout: outR, stderr: errR, stdin: stdinW };
  } catch {
    endGitGuard?.();
    opened.forEach(closeQuietly);
    ours.forEach(closeQuietly);
    // Its spawner ended with the request sent: whatever it may have started goes before the other way starts it again.
    if (sent) containment.cgroup.signal("SIGKILL");
    releaseContainment(containment);
    return null;
  }
}

/** The spawner for commands under `run` in `cwd`: the one made in what they would be made in now, or a new one. */
async function spawnerFor(run: SandboxRun | null, cwd: string): Promise<Spawner | null> {
  const madeIn = madeInNow(run, cwd) ?? UNSANDBOXED;
  retireStale();
  let found = spawners.get(madeIn);
  spawners.delete(madeIn);
  found ??= startSpawner(run, madeIn);
  spawners.set(madeIn, found); // most recently used last
  const spawner = await found.catch(() => null);
  if (spawner?.alive) return spawner;
  if (spawners.get(madeIn) === found) spawners.delete(madeIn);
  return null;
}

/** Makes the spawner (and kept sandbox) for commands under `run` in `cwd` now, ahead of them. */
export function warmSpawner(run: SandboxRun | null, cwd: string): void {
  void spawnerFor(run, cwd).catch(() => {});
}

async function startSpawner(run: SandboxRun | null, madeIn: unknown): Promise<Spawner> {
  return Spawner.start(await restrictionsFor(run, madeIn, true));
}

/** Spawners made in a retired sandbox view end once their commands have; so do idle ones beyond MAX_SPAWNERS. */
function retireStale(): void {
  let extra = spawners.size - MAX_SPAWNERS;
  for (const [key, promise] of spawners) {
    const stale = typeof key === "object" && key !== null && (key as Kept).retired;
    if (!stale && extra <= 0) continue;
    void promise.then((s) => s.retire()).catch(() => {});
    spawners.delete(key);
    extra--;
  }
}

/**
 * Ends every spawner (the server is closing): commands still running are its registry's to
 * end. (A server that exits or is killed without closing ends them too: their control
 * sockets close with it.)
 */
export function closeSpawners(): void {
  for (const promise of spawners.values()) void promise.then((s) => s.kill()).catch(() => {});
  spawners.clear();
}
