import { CWD_REPLACED_MESSAGE } from "../sandbox/bwrap.ts";
import { launcherEnv } from "./env.ts";
import type { SpawnSpec } from "./types.ts";

/**
 * A launcher is a bash that learns its command from a script on fd 3: it enters and checks
 * the working directory, sets the command's environment and execs the command. Sandboxed
 * commands always start this way (inside bwrap), so that bwrap and the launcher run with
 * the launcher environment (env.ts), never with what a call puts in `env` (`LD_PRELOAD`
 * would otherwise run in bwrap, outside the sandbox). Launchers started ahead of their
 * command (warm-launcher.ts) are the same program, given their script later.
 */

/** bash by absolute path: a launcher's environment may have no PATH. */
export const BASH = Bun.which("bash") ?? "/bin/bash";
/** The launcher: runs what is written to fd 3; a pipe closed empty (the host died) ends it. */
export const LAUNCHER = [BASH, "--noprofile", "--norc", "-c", ". /dev/fd/3; exit 125"];

/**
 * Names a launcher does not start with, though its command may have them: bash acts on them
 * when it starts (BASH_ENV is sourced, SHELLOPTS and POSIXLY_CORRECT change the shell,
 * SHLVL, PWD and OLDPWD are rewritten), so the script sets them, as a direct start would.
 */
export const SET_AT_CLAIM = new Set(["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "BASH_XTRACEFD", "BASH_COMPAT", "IFS", "PS4", "SHLVL", "PWD", "OLDPWD", "_"]);
export const EXPORTABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * What the launcher sources: the environment exactly as a direct `bash -c` (or exec of the
 * argv) would get it (bash's `exec` lowers SHLVL by one, so it is raised by one first;
 * OLDPWD only if given). Only what differs from the environment the launcher started with is
 * written (exporting costs bash ~15 µs a variable). The directory check: the path, all
 * symlinks resolved, must still be the validated (canonical) one. An environment with a
 * name bash cannot export is handed over whole by `env -i`.
 */
export function launchScript(spec: SpawnSpec, started: Record<string, string>): string {
  const lines = [
    "exec 3<&- 4<&- 5<&-", // the script, the seccomp filter, bwrap's info pipe: not the command's
    `cd -P -- ${quote(spec.cwd)} 2>/dev/null && [ "$PWD" = ${quote(spec.cwd)} ] || { printf '%s\\n' ${quote(CWD_REPLACED_MESSAGE)} >&2; exit 126; }`,
  ];
  if (spec.stdin === null && !spec.tty) lines.push("exec 0</dev/null");
  const command = spec.argv ? spec.argv.map(quote).join(" ") : `bash -c ${quote(spec.command)}`;
  const names = Object.keys(spec.env);
  if (!names.every((name) => EXPORTABLE.test(name))) {
    lines.push(`exec env -i ${Object.entries(spec.env).map(([k, v]) => quote(`${k}=${v}`)).join(" ")} ${command}`);
    return lines.join("\n") + "\n";
  }
  for (const name of Object.keys(started)) if (!(name in spec.env)) lines.push(`unset ${name}`);
  for (const [name, value] of Object.entries(spec.env)) {
    if (name !== "SHLVL" && started[name] !== value) lines.push(`export ${quote(`${name}=${value}`)}`);
  }
  if (spec.env.OLDPWD === undefined) lines.push("export -n OLDPWD");
  const level = spec.env.SHLVL;
  lines.push(level !== undefined && /^\d{1,6}$/.test(level) ? `export SHLVL=${Number(level) + 1}` : "export -n SHLVL");
  lines.push(`exec ${command}`);
  return lines.join("\n") + "\n";
}

export function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** What a launcher starts with: the launcher environment (env.ts) less what bash acts on at start. */
export function launcherStartEnv(): Record<string, string> {
  startEnv ??= Object.fromEntries(Object.entries(launcherEnv()).filter(([name]) => !SET_AT_CLAIM.has(name)));
  return startEnv;
}
let startEnv: Record<string, string> | null = null;
