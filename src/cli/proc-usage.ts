import { readdirSync, readFileSync } from "node:fs";

/** CPU and memory of a whole process session (a task's group and everything it started). */
export interface GroupUsage {
  /** Average CPU use since each live process started, summed over the group (like ps(1)'s %CPU). */
  cpuPercent: number;
  /** Resident memory of every live process of the group, in bytes. */
  rssBytes: number;
}

const TICKS = 100; // USER_HZ on Linux
const PAGE = 4096;

/**
 * Reads /proc once and sums usage per session id (tasks lead their own session, so the
 * session id is the task's pid). Linux only; elsewhere the map is empty.
 */
export function usageBySession(sessions: Set<number>): Map<number, GroupUsage> {
  const out = new Map<number, GroupUsage>();
  if (sessions.size === 0) return out;
  let uptime: number;
  let names: string[];
  try {
    uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
    names = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // Fields after the command name, which may itself hold spaces and parentheses.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const session = Number(f[3]);
    if (!sessions.has(session) || f[0] === "Z") continue;
    const cpuSeconds = (Number(f[11]) + Number(f[12])) / TICKS;
    const age = uptime - Number(f[19]) / TICKS;
    const u = out.get(session) ?? { cpuPercent: 0, rssBytes: 0 };
    u.cpuPercent += age > 0 ? (100 * cpuSeconds) / age : 0;
    u.rssBytes += Number(f[21]) * PAGE;
    out.set(session, u);
  }
  return out;
}
