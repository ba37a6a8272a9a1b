import { constants } from "node:os";

const NAMES = new Map<number, string>();
// First name wins (SIGABRT, not its alias SIGIOT).
for (const [name, n] of Object.entries(constants.signals)) if (!NAMES.has(n as number)) NAMES.set(n as number, name);

/**
 * bwrap's init reaps the command and exits with 128+N when a signal N killed it, so the
 * kill is indistinguishable from `exit 128+N`. A sandboxed leader's 129..159 is reported
 * as the signal: a command that dies of a signal is far more common than one that exits
 * with such a status on purpose (documented in the README's limitations).
 */
export function sandboxedExit(code: number | null, signal: string | null): { code: number | null; signal: string | null } {
  if (signal !== null || code === null || code <= 128 || code > 128 + 31) return { code, signal };
  const name = NAMES.get(code - 128);
  return name ? { code: null, signal: name } : { code, signal };
}
