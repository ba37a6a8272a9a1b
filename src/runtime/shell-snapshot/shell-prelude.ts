import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * The file a local `bash -c` command reads before its command line, through BASH_ENV (bash
 * sources it at start, so the line numbers and `$0` of the command are its own): the user's
 * aliases, functions and options (shell-snapshot.ts), and, for a command of a session, a
 * trap that writes where it ended up (its directory and exported variables) for the next one.
 * Only commands that need it get BASH_ENV: the others pay nothing.
 *
 * It lives in agent-shell's config folder, which every sandbox keeps read-only (SPEC §26): a
 * sandboxed command cannot plant code in what later commands source.
 */

/** The variable naming where a session's command writes its end state (the prelude takes it out of the environment). */
export const SESSION_OUT = "AGENT_SHELL_SESSION_OUT";

const SESSION_PART = `if [ -n "\${${SESSION_OUT}-}" ]; then
  __agent_shell_session_out=$${SESSION_OUT}
  builtin unset ${SESSION_OUT}
  __agent_shell_session_save() {
    builtin local __n
    # noclobber: written only as a new file, never through a link planted at its name.
    builtin set -C
    { builtin pwd -P; builtin printf '\\0'; for __n in $(builtin compgen -e); do builtin printf '%s=%s\\0' "$__n" "\${!__n-}"; done; } > "$__agent_shell_session_out" 2>/dev/null
  }
  builtin trap __agent_shell_session_save EXIT
fi
`;

const written = new Map<string, string>();

/**
 * The prelude for `definitions`, written once per content; `bashEnv` is the user's own
 * BASH_ENV, handed on to the scripts the command runs. Throws when the file cannot be written.
 */
export function preludeFile(definitions: string, bashEnv: string | undefined): string {
  const restore = bashEnv === undefined ? "builtin unset BASH_ENV\n" : `builtin export BASH_ENV=${quote(bashEnv)}\n`;
  const text = `# Written by agent-shell at each start: what its local commands start from.\n${restore}${definitions}${SESSION_PART}`;
  const found = written.get(text);
  if (found) return found;
  const file = join(shellFolder(), `prelude-${Bun.hash(text).toString(16)}.sh`);
  writeOwnFile(file, text);
  written.set(text, file);
  return file;
}

/** Where agent-shell keeps what it made of the user's shell: in its config folder, read-only in every sandbox. */
export function shellFolder(): string {
  return join(process.env.XDG_CONFIG_HOME || join(process.env.HOME || homedir(), ".config"), "agent-shell", "shell");
}

/** Writes `file` aside and renames it over: a link or a stale file at the name is replaced, never followed. */
export function writeOwnFile(file: string, text: string): void {
  mkdirSync(shellFolder(), { recursive: true, mode: 0o700 });
  const aside = `${file}.${process.pid}.tmp`;
  try {
    rmSync(aside, { force: true });
    writeFileSync(aside, text, { mode: 0o600, flag: "wx" });
    renameSync(aside, file);
  } catch (e) {
    rmSync(aside, { force: true });
    throw e;
  }
}

function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
