import { readdirSync, readFileSync } from "node:fs";

export interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  state: string;
  cmdline: string;
}

/** Every live (non-zombie) process on the machine, read from /proc. */
export function processes(): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (rest[0] === "Z" || rest[0] === "X") continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "latin1").split("\0").join(" ").trim();
      out.push({ pid: Number(entry), state: rest[0]!, ppid: Number(rest[1]), pgrp: Number(rest[2]), session: Number(rest[3]), cmdline });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Live processes whose command line contains `marker`. Use a unique marker per test (e.g. `sleep 301.5`). */
export function processesMatching(marker: string): Proc[] {
  return processes().filter((p) => p.cmdline.includes(marker) && p.pid !== process.pid && !isSandboxSupervisor(p));
}

/**
 * bwrap (the sandbox's supervisor and its pid-namespace init) carries the command in its
 * own argv; it lives exactly as long as the command, so it is not counted as a match.
 */
function isSandboxSupervisor(p: Proc): boolean {
  return /^(\S*\/)?bwrap /.test(p.cmdline);
}

/**
 * Waits until a process runs exactly `cmdline` (a `sleep <marker>` after its exec); until then ps
 * shows the `bash -c` that becomes it, and for an instant during the exec, nothing.
 */
export async function waitForExec(cmdline: string, ms = 5000): Promise<Proc[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = processes().filter((p) => p.cmdline === cmdline);
    if (found.length > 0 || Date.now() > deadline) return found;
    await Bun.sleep(10);
  }
}

/** Waits until no live process matches `marker`; resolves with what is still there after `ms` (empty = none). */
export async function waitNoProcess(marker: string, ms = 3000): Promise<Proc[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = processesMatching(marker);
    if (left.length === 0 || Date.now() > deadline) return left;
    await Bun.sleep(20);
  }
}

/** A unique duration like `301.2371` so `sleep <it>` can be found in ps without clashing with other tests. */
export function uniqueSleep(base = 300): string {
  return `${base}.${Math.floor(Math.random() * 1e6)}`;
}

/** Waits until no live process belongs to session/group `leader` (a task's pid); resolves with what is left after `ms`. */
export async function waitSessionGone(leader: number, ms = 3000): Promise<Proc[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = processes().filter((p) => p.session === leader || p.pgrp === leader);
    if (left.length === 0 || Date.now() > deadline) return left;
    await Bun.sleep(20);
  }
}
