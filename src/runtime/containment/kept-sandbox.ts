import { closeSync, openSync, read, statSync } from "node:fs";
import { sandboxSignature } from "./sandbox-signature.ts";
import type { SandboxRun } from "../../sandbox/setup.ts";
import { launcherEnv } from "../env.ts";
import { closeQuietly, createPipe } from "../kernel/pipes.ts";
import { signalGroup, stillRunning } from "../process-groups/process-group.ts";
import { helperFd } from "../spawn-helper/helper-binary.ts";
import { watchdog } from "../process-groups/watchdog.ts";
import { attachNetwork, type SandboxNetwork } from "./network-attach.ts";

/**
 * Kept sandboxes (SPEC §18): bwrap builds a policy's namespaces and mounts once, around the
 * helper's `hold` (its pid 1, which only keeps them and reaps), and every command of that
 * policy enters them (setns, spawn-helper/) instead of having bwrap build them again: the
 * 3–4 ms bwrap spends per sandbox are paid once per policy, not per command.
 *
 * A sandbox is built over the files it hides and protects as they were (sandboxSignature):
 * when one of them is replaced, or a command's directory needs a different view, the next
 * command gets a new sandbox and the old one is retired. A retired sandbox (and every one at
 * the server's end) is told so by the end of its first process's stdin: it then ends as soon
 * as nothing else runs in it, and its pid namespace with it. A non-persistent server's close
 * kills them outright; after a SIGKILL of the server the watchdog does (they are tracked).
 */
export interface Kept {
  signature: string;
  proc: Bun.Subprocess;
  /** The write end of the first process's stdin: closing it retires the sandbox. */
  holdStdin: number;
  /** Its namespaces as fds (user first), once bwrap has said where its first process is. */
  namespaces: Promise<number[]>;
  fds: number[];
  /** What each fd is (user, mnt, pid, net). */
  kinds: string[];
  retired: boolean;
  /** An allowlist policy's network (SPEC §21): the relay to the proxy, forwards and published ports. */
  network?: SandboxNetwork;
}

/** Per policy, the sandboxes in use, most recently used last (a command's directory under a hidden path needs a view of its own). */
const kept = new Map<SandboxRun, Kept[]>();
const VIEWS_PER_POLICY = 4;
/** Names, in setns order: the user namespace must be entered first. */
const KINDS = ["user", "mnt", "pid", "net", "ipc"] as const;

/**
 * `run`'s kept sandbox for a command in `cwd`: the one in use, or a new one when none covers
 * the files as they are now (one whose hidden or protected files were replaced is retired).
 */
export function keptSandbox(run: SandboxRun, cwd: string): Kept {
  const signature = sandboxSignature(run.policy, cwd);
  const views = kept.get(run) ?? [];
  kept.set(run, views);
  const at = views.findIndex((k) => k.signature === signature && stillRunning(k.proc));
  let entry: Kept;
  if (at >= 0) {
    entry = views.splice(at, 1)[0]!;
  } else {
    entry = build(run, cwd, signature);
    // What it replaces: the same view built over files since replaced, or the least recently used.
    for (const k of views.filter((k) => sameView(k.signature, signature))) retire(k);
    while (views.length >= VIEWS_PER_POLICY) retire(views[0]!);
  }
  views.push(entry);
  return entry;
}

/** The namespace fds of a kept sandbox, user namespace first; `withPid` false leaves the pid namespace out (the command gets its own). */
export async function namespacesOf(entry: Kept, withPid: boolean): Promise<number[]> {
  const fds = await entry.namespaces;
  // Never an empty list: a command would then start outside (the mount namespace is always the sandbox's own).
  if (!entry.kinds.includes("mnt")) throw new Error("the kept sandbox has no mount namespace of its own");
  return withPid ? fds : fds.filter((_, i) => entry.kinds[i] !== "pid");
}

/** Whether two signatures cover the same paths (only the files' identities differ). */
function sameView(a: string, b: string): boolean {
  const paths = (s: string) => s.split("\n").map((line) => line.slice(0, line.lastIndexOf("="))).join("\n");
  return paths(a) === paths(b);
}

function build(run: SandboxRun, cwd: string, signature: string): Kept {
  const [stdinR, stdinW] = createPipe();
  const [readyR, readyW] = createPipe();
  const [infoR, infoW] = createPipe();
  const helper = helperFd();
  let proc: Bun.Subprocess;
  try {
    // fd 3: bwrap's info pipe; fd 4: the helper, run as the sandbox's first process by fd.
    proc = Bun.spawn(run.keptSandboxArgv(["/proc/self/fd/4", "hold"], { cwd, infoFd: 3 }), {
      stdio: [stdinR, readyW, "ignore", infoW, helper],
      cwd: "/",
      env: launcherEnv(),
      detached: true,
    } as never);
  } catch (e) {
    for (const fd of [stdinW, infoR, readyR]) closeSync(fd);
    throw e;
  } finally {
    for (const fd of [stdinR, infoW, readyW]) closeSync(fd);
  }
  watchdog().track(proc.pid);
  const entry = { signature, proc, holdStdin: stdinW, fds: [] as number[], kinds: [] as string[], retired: false } as Kept;
  // bwrap tells its first process's pid as soon as it is cloned; the process itself says when
  // the sandbox around it is complete (it is exec'd last): its namespaces are entered after both.
  const info = Bun.file(infoR).text().finally(() => closeSync(infoR));
  const complete = new Promise<boolean>((done) => read(readyR, Buffer.alloc(1), 0, 1, null, (err, n) => done(!err && n === 1))).finally(() => closeSync(readyR));
  entry.namespaces = Promise.all([info, complete])
    .then(([info, ready]) => {
      if (!ready) throw new Error(`bubblewrap could not build the sandbox (exit ${proc.exitCode ?? proc.signalCode})`);
      const first = Number(/"child-pid":\s*(\d+)/.exec(info)?.[1]);
      if (!(first > 0)) throw new Error(`bubblewrap could not build the sandbox (exit ${proc.exitCode ?? proc.signalCode})`);
      // Only the namespaces bwrap made: the user namespace is shared for root, the network for a networked policy.
      for (const kind of KINDS) {
        const path = `/proc/${first}/ns/${kind}`;
        if (statSync(path).ino === statSync(`/proc/self/ns/${kind}`).ino) continue;
        entry.fds.push(openSync(path, "r"));
        entry.kinds.push(kind);
      }
      const fds = entry.fds;
      const rules = run.policy.allowlist;
      if (rules) {
        // The relay enters only the user and network namespaces: it stays in the host's mounts, where the proxy's sockets are.
        const namespaces = fds.filter((_, i) => entry.kinds[i] === "user" || entry.kinds[i] === "net");
        entry.network = attachNetwork({ policy: run.policy, rules, namespaces, holdPid: first, stateRoot: run.stateRoot });
        const network = entry.network;
        return network.ready.then(() => {
          if (entry.retired) release(entry);
          return fds;
        });
      }
      // Retired while it was being built: the calls waiting for it still start in it, then its fds go.
      if (entry.retired) release(entry);
      return fds;
    });
  entry.namespaces.catch(() => retire(entry));
  void proc.exited.then(() => {
    watchdog().untrack(proc.pid);
    entry.network?.close();
    retire(entry);
  });
  return entry;
}

/** No more commands in it: it ends once nothing runs inside. */
function retire(k: Kept): void {
  for (const views of kept.values()) {
    const at = views.indexOf(k);
    if (at >= 0) views.splice(at, 1);
  }
  release(k);
}

function release(k: Kept): void {
  k.retired = true;
  const fds = [k.holdStdin, ...k.fds];
  k.holdStdin = -1;
  k.fds = [];
  // A turn later: a start that already has these fds (its await resolved) spawns with them first.
  setTimeout(() => fds.forEach(closeQuietly), 0);
}

/**
 * The server is closing: every kept sandbox is retired, and killed outright (with whatever
 * still runs in it) unless its tasks are meant to outlive the server (a persistent registry).
 */
export function closeKeptSandboxes(options: { kill: boolean }): void {
  for (const k of [...kept.values()].flat()) {
    retire(k);
    if (options.kill) {
      signalGroup(k.proc.pid, "SIGKILL");
      k.network?.close();
    }
  }
}

process.once("exit", () => closeKeptSandboxes({ kill: !persistentTasks }));

let persistentTasks = false;
/** Whether tasks outlive this server (a persistent registry): then its kept sandboxes do too, until they are empty. */
export function keepSandboxesForTasks(persistent: boolean): void {
  persistentTasks = persistent;
}
