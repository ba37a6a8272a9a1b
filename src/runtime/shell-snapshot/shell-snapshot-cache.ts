import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { isSecretName } from "../env.ts";
import { shellFolder, writeOwnFile } from "./shell-prelude.ts";

/** What the user's login shell gave (shell-snapshot.ts takes it; kept here for the next server). */
export interface ShellSnapshot {
  /** The shell that was run ($SHELL, else the account's). */
  shell: string;
  tookMs: number;
  /** Its exported variables, less the shell's own bookkeeping (secret-named ones are left out where a command's environment is made). */
  env: Record<string, string>;
  aliases: string[];
  functions: string[];
  /** Shell options on in the user's shell (bash: shopt; zsh: setopt). */
  options: string[];
  /** Bash text defining the aliases, functions and options a command gets ("" when none). */
  definitions: string;
  /** Why the snapshot is not used (commands then start from the server's environment), or null. */
  failure: string | null;
}

/**
 * The last snapshot of the user's shell, kept between servers: a server's first commands
 * start from it at once while the shell runs again (SPEC §23: off the first call's path);
 * the new snapshot replaces it as soon as it is there. Only a first server ever (or one
 * after a failed snapshot) waits for the shell. Kept are only the variables the rc files set
 * (what the shell merely inherited comes from the new server's own environment, which may
 * differ), none secret-named, in the folder every sandbox holds read-only (a command cannot
 * plant one).
 */

const VERSION = 1;

function cacheFile(source: NodeJS.ProcessEnv): string {
  return join(shellFolder(), `snapshot-${Bun.hash(`${source.SHELL ?? ""}\0${source.HOME ?? ""}`).toString(16)}.json`);
}

/** The kept snapshot for this shell and home, or null. */
export function keptSnapshot(source: NodeJS.ProcessEnv = process.env): ShellSnapshot | null {
  try {
    const kept = JSON.parse(readFileSync(cacheFile(source), "utf8")) as ShellSnapshot & { version?: number };
    if (kept.version !== VERSION || kept.failure !== null || typeof kept.env !== "object" || typeof kept.definitions !== "string") return null;
    return { shell: kept.shell, tookMs: kept.tookMs, env: kept.env, aliases: kept.aliases, functions: kept.functions, options: kept.options, definitions: kept.definitions, failure: null };
  } catch {
    return null;
  }
}

/** Keeps a good snapshot for the next server (a failed one removes what was kept: the failure is reported anew). */
export function keepSnapshot(snapshot: ShellSnapshot, source: NodeJS.ProcessEnv = process.env): void {
  const file = cacheFile(source);
  try {
    if (snapshot.failure) {
      rmSync(file, { force: true });
      return;
    }
    const env = Object.fromEntries(Object.entries(snapshot.env).filter(([k, v]) => !isSecretName(k) && source[k] !== v));
    writeOwnFile(file, JSON.stringify({ version: VERSION, ...snapshot, env }));
  } catch {}
}
