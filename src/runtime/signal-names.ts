import { constants } from "node:os";

/** Names `kill -l` uses where Node's table lists an alias first or last (6 is ABRT, not IOT). */
const PREFERRED: Record<string, NodeJS.Signals> = { SIGIOT: "SIGABRT", SIGPOLL: "SIGIO", SIGCLD: "SIGCHLD", SIGUNUSED: "SIGSYS" };

const BY_NUMBER = new Map<number, NodeJS.Signals>();
for (const [name, n] of Object.entries(constants.signals)) if (!BY_NUMBER.has(n as number) || PREFERRED[BY_NUMBER.get(n as number)!]) BY_NUMBER.set(n as number, (PREFERRED[name] ?? name) as NodeJS.Signals);

/** A signal's name as `kill -l` gives it, from its number or any of its names. */
export function signalName(signal: number | string): NodeJS.Signals | null {
  if (typeof signal === "number") return BY_NUMBER.get(signal) ?? null;
  return (PREFERRED[signal] ?? signal) as NodeJS.Signals;
}
