import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir, userInfo } from "node:os";
import { basename, join } from "node:path";
import { OWNER_MARKER, OWNER_TOKEN } from "../env.ts";
import { keepSnapshot, keptSnapshot, type ShellSnapshot } from "./shell-snapshot-cache.ts";

export type { ShellSnapshot };

/**
 * The user's own shell, captured once (SPEC §23): a harness started from a desktop hands its
 * servers a bare PATH, while the tools a user installed (nvm, pyenv, cargo) are set up by
 * their rc files. Their login shell runs once, interactive (so `.bashrc`/`.zshrc` count),
 * stdin closed, under a time limit; its exported variables, aliases, functions and options
 * are recorded. Commands then start from them (env.ts, shell-prelude.ts).
 */

/** How long the user's shell may take to start. */
export const SNAPSHOT_LIMIT_MS = 10_000;


/** Set by a shell for itself, or by agent-shell for each command: never taken from the snapshot. */
const SHELL_OWN = new Set(["_", "SHLVL", "PWD", "OLDPWD", OWNER_MARKER]);
/**
 * Functions a command does not get: completion helpers (by convention named `_…`; an
 * interactive bash defines hundreds) and the hook that runs a slow lookup on every unknown
 * command.
 */
const SKIPPED_FUNCTION = /^_|^(command_not_found_handle|command_not_found_handler|quote|dequote|quote_readline)$/;
/** The shopt options a command gets from the user's shell: how words and globs expand, nothing interactive. */
const CARRIED_SHOPT = new Set(["extglob", "globstar", "nullglob", "dotglob", "nocaseglob", "failglob", "nocasematch", "lastpipe"]);

/**
 * Writes what the rc files left into the folder "$1" ($2: env(1) by its full path, so a
 * PATH the rc files broke cannot hide it). A bash login shell reads `.bashrc` only when a
 * profile sources it; with no profile at all, `.bashrc` is what the user's terminal reads.
 */
const BASH_SCRIPT = [
  '__as_d=$1 __as_env=$2',
  'if [ ! -e "$HOME/.bash_profile" ] && [ ! -e "$HOME/.bash_login" ] && [ ! -e "$HOME/.profile" ] && [ -r "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi',
  '"$__as_env" -0 > "$__as_d/env"',
  'builtin alias -p > "$__as_d/aliases"',
  'builtin declare -f > "$__as_d/functions"',
  'builtin shopt -s > "$__as_d/options"',
  'builtin printf ok > "$__as_d/done"',
].join("\n");

const ZSH_SCRIPT = [
  '__as_d=$1 __as_env=$2',
  '"$__as_env" -0 > "$__as_d/env"',
  'builtin alias -rL > "$__as_d/aliases"',
  'for __as_f in ${(k)functions}; do [[ $__as_f == _* ]] || builtin functions -x 2 -- $__as_f; done > "$__as_d/functions"',
  'builtin setopt > "$__as_d/options"',
  'builtin print -n ok > "$__as_d/done"',
].join("\n");

/** Shells still starting, by their process group, with the folder they write to. */
const starting = new Map<number, string>();

/** Ends the shells still starting and removes their folders (the server is closing). */
export async function endShellSnapshots(): Promise<void> {
  const ending = [...starting].map(async ([pid, dir]) => {
    await endGroup(pid);
    rmSync(dir, { recursive: true, force: true });
  });
  starting.clear();
  await Promise.all(ending);
}

let taking: Promise<ShellSnapshot> | null = null;
let taken: ShellSnapshot | null = null;
let kept: ShellSnapshot | null = null;

/**
 * The snapshot of this process's user shell: taken at the first ask, then the same — as a
 * value once it is there (a command then starts without waiting a turn of the event loop).
 * Until it is, the one an earlier server kept (shell-snapshot-cache.ts); with none, a
 * command waits for it.
 */
export function userShell(): ShellSnapshot | Promise<ShellSnapshot> {
  if (taken) return taken;
  if (!taking) {
    kept = keptSnapshot();
    taking = takeShellSnapshot().then((s) => {
      keepSnapshot(s);
      return (taken = s);
    });
  }
  return kept ?? taking;
}

/** Runs the user's login shell once and records what its rc files set up. Never rejects. */
export async function takeShellSnapshot(source: NodeJS.ProcessEnv = process.env, limitMs = SNAPSHOT_LIMIT_MS): Promise<ShellSnapshot> {
  const shell = source.SHELL || accountShell();
  const started = performance.now();
  const empty = (failure: string): ShellSnapshot => ({
    shell,
    tookMs: Math.round(performance.now() - started),
    env: {},
    aliases: [],
    functions: [],
    options: [],
    definitions: "",
    failure,
  });
  const kind = basename(shell).startsWith("zsh") ? "zsh" : basename(shell).startsWith("bash") ? "bash" : null;
  if (!kind) return empty(`the user's shell ${shell} is neither bash nor zsh`);
  let dir: string;
  try {
    sweepAbandoned(limitMs);
    dir = mkdtempSync(join(tmpdir(), "agent-shell-snapshot-"));
  } catch (e) {
    return empty(`no folder for it: ${(e as Error).message}`);
  }
  try {
    const envBin = ["/usr/bin/env", "/bin/env"].find((p) => existsSync(p)) ?? "env";
    const home = source.HOME || homedir();
    let proc: Bun.Subprocess<"ignore", "ignore", "pipe">;
    try {
      proc = Bun.spawn([shell, "-l", "-i", "-c", kind === "zsh" ? ZSH_SCRIPT : BASH_SCRIPT, "agent-shell-snapshot", dir, envBin], {
        stdio: ["ignore", "ignore", "pipe"],
        cwd: existsSync(home) ? home : "/",
        env: { ...source, [OWNER_MARKER]: OWNER_TOKEN } as Record<string, string>,
        // A session of its own: nothing waits on a terminal, and a timeout ends all it started.
        detached: true,
      });
    } catch (e) {
      return empty(`${shell} could not start: ${(e as Error).message}`);
    }
    starting.set(proc.pid, dir);
    const stderr = new Response(proc.stderr).text().catch(() => "");
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void endGroup(proc.pid);
    }, limitMs);
    const code = await proc.exited;
    clearTimeout(timer);
    starting.delete(proc.pid);
    // What its rc files left running (an agent, a background job) goes with it.
    void endGroup(proc.pid);
    if (!existsSync(join(dir, "done"))) {
      if (timedOut) return empty(`${shell} did not finish starting within ${limitMs / 1000} s (does a startup file wait for something?)`);
      const said = (await stderr).trim().split("\n").slice(-2).join(" / ").slice(0, 300);
      return empty(`${shell} exited with ${code} while starting${said ? `: ${said}` : ""}`);
    }
    const snapshot = parse(dir, kind);
    return { shell, tookMs: Math.round(performance.now() - started), ...snapshot, failure: null };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Folders of snapshots whose server was killed while its shell was starting (nothing else
 * removes them) go when the next snapshot is taken: this user's, older than the time limit.
 */
function sweepAbandoned(limitMs: number): void {
  const uid = process.getuid?.();
  try {
    for (const name of readdirSync(tmpdir())) {
      if (!name.startsWith("agent-shell-snapshot-")) continue;
      const path = join(tmpdir(), name);
      const st = lstatSync(path);
      if (st.isDirectory() && st.uid === uid && Date.now() - st.mtimeMs > 2 * limitMs) rmSync(path, { recursive: true, force: true });
    }
  } catch {}
}

function accountShell(): string {
  try {
    return userInfo().shell || "/bin/sh";
  } catch {
    return "/bin/sh";
  }
}

/** How long the rc files' processes get to run their traps before they are killed. */
const END_GRACE_MS = 1000;

/**
 * Ends a login shell's group: TERM and HUP first (an interactive shell ignores TERM), so that
 * the rc files' EXIT traps run: pyenv's rehash removes its lock there, and a SIGKILL that left
 * the lock made every later login shell wait 60 s for it. KILL for what is left after a grace.
 */
async function endGroup(pid: number): Promise<void> {
  if (!signalGroup(pid, "SIGTERM")) return;
  signalGroup(pid, "SIGHUP");
  for (const deadline = Date.now() + END_GRACE_MS; Date.now() < deadline; ) {
    await Bun.sleep(20);
    if (!signalGroup(pid, 0)) return;
  }
  signalGroup(pid, "SIGKILL");
}

/** Whether the group had a process to signal. */
function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

function read(dir: string, name: string): string {
  try {
    return readFileSync(join(dir, name), "utf8");
  } catch {
    return "";
  }
}

/** The recorded files, turned into variables, names and the bash text a command sources. */
function parse(dir: string, kind: "bash" | "zsh"): Omit<ShellSnapshot, "shell" | "tookMs" | "failure"> {
  const env: Record<string, string> = {};
  for (const entry of read(dir, "env").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq <= 0) continue;
    const name = entry.slice(0, eq);
    if (!SHELL_OWN.has(name)) env[name] = entry.slice(eq + 1);
  }
  const aliasLines = read(dir, "aliases")
    .split("\n")
    .filter((line) => /^alias [^-=\s][^=\s]*=/.test(line));
  const aliases = aliasLines.map((line) => /^alias ([^=]+)=/.exec(line)![1]!);
  const functions = splitFunctions(read(dir, "functions")).filter(([name]) => !SKIPPED_FUNCTION.test(name));
  // A zsh function is kept when bash can read it too (most a user writes can); one not loaded yet cannot run in bash.
  const usable =
    kind === "bash"
      ? functions
      : functions.filter(([, text]) => !text.includes("autoload -X") && Bun.spawnSync(["bash", "-n", "-c", text], { stdio: ["ignore", "ignore", "ignore"] }).exitCode === 0);
  const options =
    kind === "bash"
      ? read(dir, "options").split("\n").map((line) => line.split(/\s+/)[0]!).filter(Boolean)
      : read(dir, "options").split("\n").filter(Boolean);
  const carried = kind === "bash" ? options.filter((o) => CARRIED_SHOPT.has(o)) : [];
  const parts: string[] = [];
  if (carried.length) parts.push(`shopt -s ${carried.join(" ")}`);
  if (aliasLines.length) parts.push("shopt -s expand_aliases", ...aliasLines);
  parts.push(...usable.map(([, text]) => text));
  return { env, aliases, functions: usable.map(([name]) => name), options, definitions: parts.length ? parts.join("\n") + "\n" : "" };
}

/** `declare -f` / `functions` output, one [name, text] per function (each starts with `name () `). */
function splitFunctions(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let current: [string, string[]] | null = null;
  for (const line of text.split("\n")) {
    const start = /^(\S+) \(\) *\{? *$/.exec(line);
    if (start) {
      if (current) out.push([current[0], current[1].join("\n")]);
      current = [start[1]!, [line]];
    } else current?.[1].push(line);
  }
  if (current) out.push([current[0], current[1].join("\n")]);
  return out;
}

let noted = false;

/** A snapshot that is not in use, said once per server: the first result that can carry it. */
export function snapshotNote(snapshot: ShellSnapshot | null): string | null {
  if (!snapshot?.failure || noted) return null;
  noted = true;
  return `Your login shell was not captured (${snapshot.failure}): commands start from the server's own environment. See \`agent-shell shell check\`.`;
}
