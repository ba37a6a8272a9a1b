import { readFileSync } from "node:fs";
import { liveMembers } from "../process-groups/process-group.ts";

/**
 * Whether a process group/session is blocked reading its stdin, from /proc/<pid>/syscall:
 * true if some member sits in read(2) on fd 0; null (can't tell) if one waits in
 * poll/select/epoll, as event-loop programs do; false if all are busy or sleeping
 * (`sleep`, waiting for a child). This keeps "Loading:" followed by a pause from being
 * taken for a prompt.
 */
const SYSCALLS: Record<string, { read: number[]; poll: number[] }> = {
  x64: { read: [0, 17, 19], poll: [7, 23, 232, 270, 271, 281, 441] },
  arm64: { read: [63, 65, 67], poll: [22, 72, 73, 441] },
};

export function blockedOnInput(leader: number): boolean | null {
  const table = SYSCALLS[process.arch];
  if (!table) return null;
  let polling = false;
  for (const member of liveMembers(leader)) {
    let fields: string[];
    try {
      fields = readFileSync(`/proc/${member.pid}/syscall`, "latin1").trim().split(" ");
    } catch {
      return null; // not allowed to look: don't guess
    }
    const nr = Number(fields[0]);
    if (Number.isNaN(nr)) continue; // "running"
    if (table.read.includes(nr) && Number(fields[1]) === 0) return true;
    if (table.poll.includes(nr)) polling = true;
  }
  return polling ? null : false;
}
