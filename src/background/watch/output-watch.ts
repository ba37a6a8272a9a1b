import { LineSplitter, testLine } from "../output/lines.ts";
import type { Task } from "../tasks/task.ts";

export interface WatchOptions {
  /** Minimum time between two notices of one task. */
  intervalMs: number;
  /** At most this many notices per task. */
  maxNotices: number;
}

/**
 * Calls `notify(lines)` with the output lines (stdout and stderr) matching `pattern`:
 * at most one notice per interval, lines matched in between batched into the next one,
 * none dropped until `maxNotices` is reached. Lines still pending when the task ends are
 * sent after the interval.
 */
export function watchOutput(task: Task, pattern: RegExp, notify: (lines: string[]) => void, opts: WatchOptions): void {
  let pending: string[] = [];
  let sent = 0;
  let lastSentAt = -Infinity;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const send = () => {
    timer = null;
    if (pending.length === 0 || sent >= opts.maxNotices) return;
    const lines = pending;
    pending = [];
    sent++;
    lastSentAt = performance.now();
    notify(lines);
  };
  const schedule = () => {
    if (timer || pending.length === 0) return;
    const wait = lastSentAt + opts.intervalMs - performance.now();
    if (wait <= 0) send();
    else timer = setTimeout(send, wait);
  };
  const match = (lines: string[]) => {
    for (const line of lines) {
      if (testLine(pattern, line)) pending.push(line);
    }
    schedule();
  };
  const splitters = [task.stdout, task.stderr].map((stream) => {
    const splitter = new LineSplitter();
    stream.onData((chunk) => match(splitter.push(chunk)));
    return splitter;
  });
  task.ended.then(() => {
    for (const s of splitters) match(s.flush());
  });
}
