import { readFileSync } from "node:fs";

/**
 * What results say about local processes: their command lines, and the pid a command inside
 * a sandbox's pid namespace knows them by (SPEC §25: `kill <sandbox_pid>` from a later command).
 */

/** The processes a command left running (SPEC §25 `left_running`). */
export interface ProcessList {
  pids: number[];
  commands: string[];
  /** The same processes as commands in the sandbox see them, when their pids differ there. */
  sandbox_pids?: number[];
}

/**
 * `pid` as seen in its innermost pid namespace (the last field of `NSpid` in
 * /proc/<pid>/status); null when it is the same as here or the process is gone.
 */
export function sandboxPidOf(pid: number): number | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "latin1");
  } catch {
    return null;
  }
  const line = /^NSpid:\s*(.*)$/m.exec(status)?.[1];
  const inner = Number(line?.trim().split(/\s+/).pop());
  return Number.isInteger(inner) && inner > 0 && inner !== pid ? inner : null;
}

/** A process caught in the middle of an exec has no arguments to read for a moment: looked at again this often, this many times. */
const EXEC_RETRY_MS = 2;
const EXEC_RETRIES = 5;

/** A live process's command line (arguments joined by spaces), "" while it has none to read (in an exec), null when it is gone or a zombie. */
function commandLineOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = stat[stat.lastIndexOf(")") + 2];
    if (state === "Z" || state === "X") return null;
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").filter(Boolean).join(" ");
  } catch {
    return null;
  }
}

/** The processes of `pids` still there, with their command lines (and inner pids, where they differ). */
export async function describeProcesses(pids: number[]): Promise<ProcessList> {
  const commands = new Map<number, string>();
  for (let attempt = 0; ; attempt++) {
    for (const pid of pids) {
      if (commands.get(pid)) continue;
      const command = commandLineOf(pid);
      if (command === null) commands.delete(pid);
      else commands.set(pid, command);
    }
    if (attempt === EXEC_RETRIES || [...commands.values()].every(Boolean)) break;
    await Bun.sleep(EXEC_RETRY_MS);
  }
  const list: ProcessList = { pids: [], commands: [] };
  const inner: number[] = [];
  for (const [pid, command] of commands) {
    list.pids.push(pid);
    list.commands.push(command || `[pid ${pid}]`);
    inner.push(sandboxPidOf(pid) ?? pid);
  }
  if (inner.some((p, i) => p !== list.pids[i])) list.sandbox_pids = inner;
  return list;
}
