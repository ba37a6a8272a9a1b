import { readdirSync, readFileSync } from "node:fs";

/**
 * Process-group and session liveness and signalling on Linux via /proc.
 * `kill(-pgid, 0)` also succeeds on zombies (PID 1 reaps lazily here), so liveness reads
 * the state field of /proc/<pid>/stat instead. A PTY shell puts each job in its own
 * process group, so members are found by session id as well as by group id.
 */

interface ProcStat {
  pid: number;
  state: string;
  pgrp: number;
  session: number;
}

function readStat(pid: string): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "latin1");
    // comm may contain spaces and parentheses: the fields start after the last ')'.
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid: Number(pid), state: rest[0]!, pgrp: Number(rest[2]), session: Number(rest[3]) };
  } catch {
    return null;
  }
}

/** Whether `pid` is alive and not a zombie (PID 1 may reap late); elsewhere than Linux, whether it exists. */
export function processAlive(pid: number): boolean {
  if (process.platform !== "linux") {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  const st = readStat(String(pid));
  return st !== null && st.state !== "Z" && st.state !== "X";
}

/** The process group of `pid`, or null when it is gone. */
export function processGroupOf(pid: number): number | null {
  return readStat(String(pid))?.pgrp ?? null;
}

/** How long one scan of /proc is reused: many concurrent kills share a scan. */
const SNAPSHOT_TTL_MS = 5;
let snapshot: { at: number; procs: ProcStat[] } | null = null;

/** Every live (non-zombie) process, from a scan at most SNAPSHOT_TTL_MS old. */
function liveProcesses(): ProcStat[] {
  const now = performance.now();
  if (snapshot && now - snapshot.at < SNAPSHOT_TTL_MS) return snapshot.procs;
  const procs: ProcStat[] = [];
  for (const entry of readdirSync("/proc")) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const st = readStat(entry);
    if (st && st.state !== "Z" && st.state !== "X") procs.push(st);
  }
  snapshot = { at: performance.now(), procs };
  return procs;
}

/** Live (non-zombie) processes whose process group or session is `leader`. */
export function liveMembers(leader: number): ProcStat[] {
  if (!quickGroupCheck(leader)) return [];
  return liveProcesses().filter((st) => st.pgrp === leader || st.session === leader);
}

/**
 * Cheap pre-check: if neither the group nor the leader exists at all, nothing can be
 * left (a session's other groups need a living leader or a group of the same id…
 * except jobs of a PTY shell, which we also catch by scanning when the leader is alive).
 */
function quickGroupCheck(leader: number): boolean {
  try {
    process.kill(-leader, 0);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EPERM") return true;
  }
  try {
    process.kill(leader, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether the process `pid` is alive (not a zombie, not gone) and still in group `pgid` (not a reused pid). */
export function memberAlive(pid: number, pgid: number): boolean {
  const st = readStat(String(pid));
  return st !== null && st.state !== "Z" && st.state !== "X" && st.pgrp === pgid;
}

/** Whether anything of the group/session `leader` is still alive. */
export function groupAlive(leader: number): boolean {
  return liveMembers(leader).length > 0;
}

/** The pids of `pid`'s children (none once it is gone). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether a child Bun started has not ended yet. */
export function stillRunning(proc: { exitCode: number | null; signalCode: unknown }): boolean {
  return proc.exitCode === null && proc.signalCode === null;
}

/** Send `signal` to the group `leader` and to every process group found in its session. */
export function signalGroup(leader: number, signal: NodeJS.Signals): void {
  const groups = new Set<number>([leader]);
  for (const m of liveMembers(leader)) groups.add(m.pgrp);
  for (const g of groups) {
    try {
      process.kill(-g, signal);
    } catch {
      /* already gone */
    }
  }
}

/** SIGKILLs every process whose environment carries `NAME=value` (the owner marker). */
export function killMarked(name: string, value: string): void {
  const needle = Buffer.from(`\0${name}=${value}\0`);
  const groups = new Set<number>();
  for (const entry of readdirSync("/proc")) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57 || Number(entry) === process.pid) continue;
    try {
      const environ = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${entry}/environ`), Buffer.from([0])]);
      if (environ.includes(needle)) {
        process.kill(Number(entry), "SIGKILL");
        const st = readStat(entry);
        if (st && st.pgrp === st.pid) groups.add(st.pgrp); // a marked group leader: its group is ours
      }
    } catch {
      /* gone, or not ours to read */
    }
  }
  // The groups of marked leaders too: a member forked after the scan began is in the group.
  for (const g of groups) {
    try {
      if (g > 1 && g !== process.pid) process.kill(-g, "SIGKILL");
    } catch {}
  }
}

/** A process's start time in clock ticks after boot (field 22 of /proc/<pid>/stat), or null. */
export function processStartTime(pid: number): string | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "latin1");
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether a process exists (zombies included: a pid still taken). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether group `pgid` is verifiably the one an agent-shell owner started: its leader
 * started at the recorded time (so the pid was not reused) and carries that owner's marker
 * in its environment. A recorded pgid without both is never signalled.
 */
export function isOurGroup(pgid: number, startTime: string | undefined, ownerToken: string | undefined): boolean {
  if (!startTime || !ownerToken || processStartTime(pgid) !== startTime) return false;
  try {
    const environ = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pgid}/environ`)]);
    return environ.includes(Buffer.from(`\0AGENT_SHELL_OWNER=${ownerToken}\0`));
  } catch {
    return false;
  }
}
