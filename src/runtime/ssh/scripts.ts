import { exportEnv, printfExact, remoteDir, shq } from "./quote.ts";

/**
 * The POSIX sh scripts run on the remote host. Only a POSIX shell, `bash` (commands run
 * with `bash -c`, as locally), `setsid`, `ps`/`awk` (liveness without zombies) and GNU
 * `tail` (following background output) are assumed there.
 *
 * Line protocol of the launch scripts: the first line is `P<pgid>` (or `C` when the
 * working directory does not exist); everything after it is the command's output.
 */

/** Where remote background tasks keep their output and exit status. */
export const REMOTE_TASKS = `"$HOME"/.agent-shell/tasks`;

export function taskDir(name: string): string {
  return `${REMOTE_TASKS}/${shq(name)}`;
}

/**
 * A command streamed directly on its channel (foreground, tty, open stdin). sshd makes the
 * remote shell a session leader, so its `$$` is the pgid (and sid) of everything the
 * command starts; `exec` keeps that pid, so the channel reports the command's own exit.
 * `--norc`: bash sources ~/.bashrc when it believes sshd started it, and `exec` lowers
 * SHLVL so the inner bash would believe it too (rc output would mix into the command's);
 * the login shell has already run the rc files and exported their environment.
 * Without a tty the command first waits for a `go` line on stdin: agent-shell sends it once
 * the control shell tracks the group (`read` takes bytes one at a time from a pipe, so the
 * command's own stdin starts right after it).
 */
export function directScript(command: string, cwd: string, env: Record<string, string>, tty: boolean): string {
  return [
    `cd -- ${remoteDir(cwd)} 2>/dev/null || { echo C; exit 126; }`,
    exportEnv(env),
    `echo "P$$"`,
    ...(tty ? [] : [`IFS= read -r agent_go || exit 125`]),
    `exec bash --norc -c ${shq(command)}`,
  ].join("\n");
}

/**
 * Starts a detached background task: a waiter in its own session runs the command in
 * another new session (so the command's group can be killed without the waiter), with
 * output to files, and records the exit status when it ends. Nothing is tied to the SSH
 * connection: the task survives a drop and is read back from the files.
 */
export function launchScript(name: string, command: string, cwd: string, env: Record<string, string>, stdin: string | null): string {
  const d = taskDir(name);
  return [
    `d=${d}`,
    `(umask 077; mkdir -p "$d") || exit 2`,
    `cd -- ${remoteDir(cwd)} 2>/dev/null || { rm -rf "$d"; echo C; exit 0; }`,
    `: > "$d/out"; : > "$d/err"`,
    stdin === null ? `in=/dev/null` : `in="$d/stdin"; printf ${printfExact(stdin)} > "$in"`,
    exportEnv(env),
    `setsid sh -c '` +
      `d=$1; echo $$ > "$d/waiter"; ` +
      `setsid bash --norc -c "$2" < "$3" > "$d/out" 2> "$d/err" & ` +
      `echo $! > "$d/pgid.tmp"; mv "$d/pgid.tmp" "$d/pgid"; ` +
      `wait $!; echo $? > "$d/exit.tmp"; mv "$d/exit.tmp" "$d/exit"` +
      `' agent-shell-waiter "$d" ${shq(command)} "$in" </dev/null >/dev/null 2>&1 &`,
    `while [ ! -s "$d/pgid" ]; do sleep 0.01 2>/dev/null || sleep 1; done`,
    `echo "P$(cat "$d/pgid")"`,
  ].join("\n");
}

/**
 * Streams a background task's output files from byte offsets: stdout file → channel
 * stdout, stderr file → channel stderr, until the exit status is recorded and everything
 * is sent (GNU tail reads once more after its `--pid` dies). The pid followed is a watcher
 * child of this script, reaped at once by `wait`: the waiter itself is an orphan that a
 * lazily reaping init may leave a zombie for seconds.
 * A tail holds a session slot, so it is a lease of about `leaseSeconds`: then it ends
 * (exit 4) and is reopened from the new offsets, letting queued channels in between.
 * Exit 0: the task has ended and all its output is sent. Exit 3: its files are gone.
 */
export function tailScript(name: string, outOffset: number, errOffset: number, leaseSeconds: number): string {
  const ticks = Math.max(1, Math.round(leaseSeconds * 10));
  return [
    `d=${taskDir(name)}`,
    `[ -s "$d/pgid" ] || exit 3`,
    `(i=0; while [ ! -e "$d/exit" ] && [ -d "$d" ] && [ $i -lt ${ticks} ]; do sleep 0.1; i=$((i+1)); done) & w=$!`,
    `tail -s 0.1 -c +${outOffset + 1} -F --pid=$w "$d/out" 2>/dev/null &`,
    `{ tail -s 0.1 -c +${errOffset + 1} -F --pid=$w "$d/err" 2>/dev/null; } >&2 &`,
    `wait`,
    `[ -d "$d" ] || exit 3`,
    `[ -e "$d/exit" ] || exit 4`,
    `exit 0`,
  ].join("\n");
}

/** Prints the recorded exit status (`X<code>`), or `N` when there is none, or exits 3 when the files are gone. */
export function exitStatusScript(name: string): string {
  const d = taskDir(name);
  return `d=${d}\n[ -d "$d" ] || exit 3\nif [ -s "$d/exit" ]; then echo "X$(cat "$d/exit")"; else echo N; fi`;
}

export function removeTaskScript(name: string): string {
  return `rm -rf ${taskDir(name)}`;
}

/**
 * Exits 0 when 127.0.0.1:`port` accepts a connection (bash's /dev/tcp). Like the local probe
 * (runtime/local/port-probe.ts) it never resets the connection: closing a socket with a greeting
 * unread sends a reset, which kills a server with no socket error handler, so a detached
 * `cat` drains it until the service hangs up (2 s at most).
 */
export function portProbeScript(port: number): string {
  return `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${Math.trunc(port)} || exit 1; (timeout 2 cat <&3 >/dev/null 2>&1 &)' 2>/dev/null`;
}

/**
 * Exit 0 while any process of group/session `pgid` is alive (zombies excluded: a lazily
 * reaping init keeps them around), 1 when none is.
 */
export function aliveScript(pgid: number): string {
  return [
    `kill -0 -${pgid} 2>/dev/null || kill -0 ${pgid} 2>/dev/null || exit 1`,
    `command -v ps >/dev/null 2>&1 || exit 0`,
    `ps -e -o pgid= -o sid= -o stat= | awk -v g=${pgid} '($1==g||$2==g) && $3 !~ /^Z/ {f=1} END {exit !f}'`,
  ].join("\n");
}

/** Signals group `pgid` and every process group of its session (the jobs of a tty shell). */
export function signalScript(pgid: number, signal: string): string {
  const sig = signal.replace(/^SIG/, "");
  if (!/^[A-Z0-9]+$/.test(sig)) throw new Error(`bad signal name ${signal}`);
  return [
    `kill -s ${sig} -- -${pgid} 2>/dev/null`,
    `command -v ps >/dev/null 2>&1 || exit 0`,
    `for g in $(ps -e -o pgid= -o sid= | awk -v s=${pgid} '$2==s && $1!=s {print $1}' | sort -u); do kill -s ${sig} -- -$g 2>/dev/null; done`,
    `exit 0`,
  ].join("\n");
}

/**
 * The persistent spawner (spawner.ts): a bash started once per spawner channel, after the
 * remote login shell has run the user's rc files once; every command it starts inherits
 * that environment without paying for the rc files again. It reads requests (spawnScript)
 * from its stdin and runs one command at a time:
 * - the command runs in its own session (`setsid` without a fork: a background job of a
 *   shell without job control is no group leader), so `$BASHPID` before the exec is its
 *   pgid; it first waits for `go`, sent once the control shell tracks the group;
 * - its stdout and stderr go through `cat` relays, which print the end marker `E` when the
 *   last holder of the pipe has closed it, as a channel would end at end-of-file;
 * - the spawner prints `X<code>` or `K<signal name>` when the leader ends. `wait` gives
 *   128+N for both `exit 128+N` and death by signal N; the job table, written by the CHLD
 *   trap before `wait` returns, still tells them apart ("Exit 137" vs "Killed").
 * stdin of the job is named explicitly: without job control bash gives background jobs
 * /dev/null, and the job must read its `go` from the channel.
 */
export const SPAWNER_PRELUDE = [
  `agent_jf=$(mktemp 2>/dev/null) || agent_jf="\${TMPDIR:-/tmp}/agent-shell-jobs.$$"`,
  `trap 'rm -f "$agent_jf"' EXIT`,
  `trap 'jobs -l >"$agent_jf" 2>/dev/null' CHLD`,
  `agent_run() {`,
  `  agent_child <&0 > >(cat; printf '%sE\\n' "$agent_n") 2> >(cat >&2; printf '%sE\\n' "$agent_n" >&2) &`,
  `  agent_p=$!`,
  `  wait $agent_p; agent_st=$?`,
  `  while kill -0 $agent_p 2>/dev/null; do wait $agent_p; agent_st=$?; done`,
  `  agent_x="X$agent_st"`,
  `  if [ $agent_st -gt 128 ]; then`,
  `    agent_c=; agent_d=; read -r _ _ agent_c agent_d _ <"$agent_jf"`,
  `    [ "$agent_c" = $agent_st ] || [ "$agent_d" = $agent_st ] || agent_x="K$(kill -l $agent_st)"`,
  `  fi`,
  `  printf '%s%s\\n' "$agent_n" "$agent_x"`,
  `}`,
  ``,
].join("\n");

/**
 * One command for the spawner: markers `C` (no such working directory), `P<pgid>` on
 * stdout and `S` on stderr when the command's bytes begin (see SPAWNER_PRELUDE).
 */
export function spawnScript(nonce: string, command: string, cwd: string, env: Record<string, string>, stdin: null | { text: string }): string {
  const input = stdin === null ? `</dev/null` : `< <(printf -- ${printfExact(stdin.text)})`;
  return [
    `agent_n=${nonce}`,
    `agent_child() {`,
    `cd -- ${remoteDir(cwd)} 2>/dev/null || { printf '%sC\\n' "$agent_n"; exit 126; }`,
    exportEnv(env),
    `printf '%sP%s\\n' "$agent_n" "$BASHPID"; printf '%sS\\n' "$agent_n" >&2`,
    `IFS= read -r agent_go || exit 125`,
    `exec setsid bash --norc -c ${shq(command)} ${input}`,
    `}`,
    `agent_run`,
    ``,
  ].join("\n");
}
