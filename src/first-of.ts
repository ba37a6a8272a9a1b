/**
 * The one wait primitive: resolves with the name of whichever happens first — one of the
 * given promises settling, an event source firing, the timeout, or the abort signal —
 * and then removes every timer and listener it made, so nothing outlives the wait.
 */
export type Settle<K extends string> = (outcome: K) => void;

export interface FirstOfOptions<P extends string, L extends string> {
  /** Named promises; the first to settle (resolve or reject) names the outcome. */
  promises?: { [K in P]?: Promise<unknown> };
  /** Event sources: each subscribes with `settle` and returns its unsubscribe. */
  listeners?: Array<(settle: Settle<L>) => () => void>;
  /** Outcome "timeout" after this long (none when undefined). */
  timeoutMs?: number;
  /** Outcome "aborted" when this aborts (at once if it already has). */
  signal?: AbortSignal;
}

/** setTimeout's ceiling: a longer delay would fire at once. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export function firstOf<P extends string = never, L extends string = never>(opts: FirstOfOptions<P, L>): Promise<P | L | "timeout" | "aborted"> {
  return new Promise((resolve) => {
    let done = false;
    const cleanups: Array<() => void> = [];
    const settle = (outcome: P | L | "timeout" | "aborted") => {
      if (done) return;
      done = true;
      for (const c of cleanups) c();
      resolve(outcome);
    };
    if (opts.signal?.aborted) return settle("aborted");
    if (opts.signal) {
      const signal = opts.signal;
      const onAbort = () => settle("aborted");
      signal.addEventListener("abort", onAbort, { once: true });
      cleanups.push(() => signal.removeEventListener("abort", onAbort));
    }
    if (opts.timeoutMs !== undefined) {
      const timer = setTimeout(() => settle("timeout"), Math.min(Math.max(0, opts.timeoutMs), MAX_DELAY_MS));
      cleanups.push(() => clearTimeout(timer));
    }
    for (const [name, promise] of Object.entries(opts.promises ?? {}) as Array<[P, Promise<unknown> | undefined]>) {
      promise?.then(
        () => settle(name),
        () => settle(name),
      );
    }
    for (const listen of opts.listeners ?? []) {
      if (done) break;
      const unsubscribe = listen(settle);
      // A source may fire while subscribing: then the cleanup has already run without it.
      if (done) unsubscribe();
      else cleanups.push(unsubscribe);
    }
  });
}

/** Waits up to `ms` for `promise`; true if it settled first. The timer goes either way. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return (await firstOf({ promises: { settled: promise }, timeoutMs: ms })) === "settled";
}
