import { constants, existsSync, mkdtempSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeBelow, withFileBelow } from "../sandbox/paths/no-follow.ts";
import { OWNER_MARKER } from "../runtime/env.ts";
import { SESSION_OUT } from "../runtime/shell-snapshot/shell-prelude.ts";

/**
 * Named lines of work (SPEC §23): within a session, the directory a command ended in and the
 * variables it exported carry over to the session's next command. A command of a session
 * writes that state when it exits (runtime/shell-snapshot/shell-prelude.ts); the state of a command only
 * counts while no later command of the session has started.
 */

interface Session {
  /** Where the next command runs (checked against the allowed paths at each call), or null: the caller's. */
  cwd: string | null;
  /** Variables set or changed by the session's commands. */
  env: Record<string, string>;
  /** Variables its commands unset. */
  unset: Set<string>;
  /** The number of its most recent command. */
  latest: number;
}

/** A command's state as it begins: where it starts from, and how its end is taken in. */
export interface SessionCall {
  cwd: string | null;
  env: Record<string, string>;
  unset: ReadonlySet<string>;
  /** Where the command writes its end state (the value of SESSION_OUT). */
  out: string;
  /** Takes in the state the command left, given the environment it started with. */
  finish(started: Record<string, string>): void;
}

/** Never carried: set anew for each command. */
const NOT_CARRIED = new Set(["_", "SHLVL", "PWD", "OLDPWD", "BASH_ENV", SESSION_OUT, OWNER_MARKER]);
/** More than this, and a command's end state is not read. */
const MAX_STATE_BYTES = 1 << 20;

export class Sessions {
  private readonly byName = new Map<string, Session>();
  private counter = 0;
  private folder: string | null = null;

  /** Starts a command of session `name` (made on first use). */
  begin(name: string): SessionCall {
    let session = this.byName.get(name);
    if (!session) this.byName.set(name, (session = { cwd: null, env: {}, unset: new Set(), latest: 0 }));
    const n = (session.latest = ++this.counter);
    // In the temp folder: a sandboxed command may write there (made again if a command removed it).
    if (!this.folder || !existsSync(this.folder)) this.folder = mkdtempSync(join(tmpdir(), "agent-shell-sessions-"));
    const folder = this.folder;
    // A name no other command can foresee; the command writes it as a new file (shell-prelude.ts).
    const out = join(folder, `${n}-${crypto.randomUUID()}`);
    const own = session;
    return {
      cwd: own.cwd,
      env: { ...own.env },
      unset: new Set(own.unset),
      out,
      finish: (started) => {
        const state = readState(folder, out);
        removeBelow(folder, out);
        if (!state || own.latest !== n) return;
        own.cwd = state.cwd;
        for (const [k, v] of Object.entries(state.env)) {
          if (NOT_CARRIED.has(k) || started[k] === v) continue;
          own.env[k] = v;
          own.unset.delete(k);
        }
        for (const k of Object.keys(started)) {
          if (NOT_CARRIED.has(k) || k in state.env) continue;
          delete own.env[k];
          own.unset.add(k);
        }
      },
    };
  }

  list(): Array<{ name: string; cwd: string | null }> {
    return [...this.byName].map(([name, s]) => ({ name, cwd: s.cwd }));
  }

  close(): void {
    if (this.folder) rmSync(this.folder, { recursive: true, force: true });
    this.folder = null;
  }
}

/** The directory and exported variables a command wrote as it exited (no link followed), or null. */
function readState(folder: string, file: string): { cwd: string; env: Record<string, string> } | null {
  const text = withFileBelow(folder, file, constants.O_RDONLY, (fd, st) => {
    if (!st.isFile() || st.size > MAX_STATE_BYTES) return null;
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < st.size) {
      const n = readSync(fd, buf, got, st.size - got, got);
      if (n <= 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString("utf8");
  });
  if (!text) return null;
  const fields = text.split("\0");
  const cwd = fields[0]!.replace(/\n$/, "");
  if (!cwd.startsWith("/")) return null;
  const env: Record<string, string> = {};
  for (const entry of fields.slice(1)) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return { cwd, env };
}
