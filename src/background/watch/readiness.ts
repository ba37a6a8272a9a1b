import { firstOf } from "../../first-of.ts";
import { LineSplitter, testLine } from "../output/lines.ts";
import type { Task } from "../tasks/task.ts";

export interface ReadinessSpec {
  pattern?: RegExp;
  port?: number;
  /** Ready when a GET of this URL answers 2xx or 3xx (redirects are not followed). */
  url?: string;
  timeoutMs: number;
}

export type Readiness = { outcome: "ready"; afterMs: number } | { outcome: "exited" } | { outcome: "timeout" } | { outcome: "aborted" };

const PORT_PROBE_INTERVAL_MS = 100;

/**
 * Waits until a service task is ready: its output has a line matching `pattern` and/or
 * `port` accepts TCP connections (both, when both are given). Ends early if the task
 * exits, the timeout passes or the caller goes away. The caller cleans up on failure.
 */
export async function awaitReadiness(
  task: Task,
  spec: ReadinessSpec,
  portOpen: (port: number) => Promise<boolean>,
  signal: AbortSignal,
): Promise<Readiness> {
  const started = performance.now();
  let settled = false;
  const cleanups: Array<() => void> = [];
  const conditions: Promise<void>[] = [];
  if (spec.pattern) conditions.push(patternSeen(task, spec.pattern, cleanups));
  if (spec.port !== undefined) conditions.push(portAccepting(spec.port, portOpen, () => settled));
  if (spec.url !== undefined) conditions.push(urlAnswering(spec.url, () => settled));
  const outcome = await firstOf({
    promises: { ready: Promise.all(conditions), exited: task.ended },
    timeoutMs: spec.timeoutMs,
    signal,
  });
  settled = true;
  for (const c of cleanups) c();
  // A task that printed its ready line and exited at once is not a running service.
  if (outcome === "ready") return task.running ? { outcome, afterMs: Math.round(performance.now() - started) } : { outcome: "exited" };
  return { outcome };
}

function patternSeen(task: Task, pattern: RegExp, cleanups: Array<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const test = (line: string) => {
      return testLine(pattern, line);
    };
    for (const stream of [task.stdout, task.stderr]) {
      const lines = new LineSplitter();
      const check = (chunk: Uint8Array) => {
        if (lines.push(chunk).some(test) || (lines.pending !== "" && test(lines.pending))) resolve();
      };
      // Output that arrived before we started listening counts too.
      const held = stream.read(0, stream.total);
      if (held) check(held);
      cleanups.push(stream.onData(check));
    }
    const screen = task.terminal;
    if (screen && task.rawOutput) {
      // A tty's lines reach stdout only once they scroll off the screen: read the screen too.
      const checkLive = () => {
        if (screen.liveText().split("\n").some(test)) resolve();
      };
      checkLive();
      cleanups.push(task.rawOutput.onData(checkLive));
    }
  });
}

async function portAccepting(port: number, portOpen: (port: number) => Promise<boolean>, stop: () => boolean): Promise<void> {
  while (!stop()) {
    if (await portOpen(port)) return;
    await Bun.sleep(PORT_PROBE_INTERVAL_MS);
  }
  return new Promise(() => {});
}

async function urlAnswering(url: string, stop: () => boolean): Promise<void> {
  while (!stop()) {
    try {
      const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      if (res.status >= 200 && res.status < 400) return;
    } catch {
      /* not listening yet */
    }
    await Bun.sleep(PORT_PROBE_INTERVAL_MS);
  }
  return new Promise(() => {});
}
