import { closeSync, writeSync } from "node:fs";
import { OWNER_TOKEN } from "../env.ts";
import { createPipe } from "../kernel/pipes.ts";
/**
 * Guarantees no orphans when the host process dies without cleaning up (SIGKILL, crash).
 * One small bash process per host, in its own session, reads `add <id>` / `del <id>` lines
 * on a pipe from the host. Children never inherit that pipe, so it reaches EOF exactly
 * when the host dies; the watchdog then SIGKILLs every process group it was told about,
 * every process in those sessions (a PTY shell puts its jobs in groups of their own), and
 * every process carrying this host's AGENT_SHELL_OWNER token in its environment.
 */
const SCRIPT = [
  'token="$1"',
  "declare -A ids marked",
  "cgroot= clean=",
  "while IFS=' ' read -r op id; do",
  '  case "$op" in',
  "    add) ids[$id]=1; clean= ;;",
  '    del) unset "ids[$id]" ;;',
  '    cgroot) cgroot=$id ;;',
  "    clean) clean=1 ;;",
  "  esac",
  "done",
  // The host's task cgroups: cgroup.kill ends everything in them, wherever it moved.
  'if [ -n "$cgroot" ]; then for d in "$cgroot"/task-*/; do [ -e "$d/cgroup.kill" ] && echo 1 > "$d/cgroup.kill"; done 2>/dev/null; fi',
  'for id in "${!ids[@]}"; do kill -KILL -- "-$id" 2>/dev/null; done',
  // Again after a moment, and later still: a child the host was spawning as it died may exec
  // (and only then carry the token) or fork (a sandbox's namespace init) after a pass; on a
  // loaded machine that exec can take longer than 50 ms. After a clean close (the host ended
  // everything itself and spawns nothing more) one pass is enough, and the later ones would
  // only take CPU from whatever starts next (the next server, a test).
  'pauses="0 0.05 0.2 0.5"; [ -n "$clean" ] && pauses=0',
  "for pause in $pauses; do",
  'sleep "$pause"',
  "for stat in /proc/[0-9]*/stat; do",
  '  read -r line < "$stat" 2>/dev/null || continue',
  "  rest=${line##*) }",
  "  set -- $rest",
  '  pid=${stat#/proc/}; pid=${pid%/stat}',
  '  [ "$pid" = "$$" ] && continue',
  '  if [ -n "${ids[$3]:-}" ] || [ -n "${ids[$4]:-}" ]; then kill -KILL "$pid" 2>/dev/null; continue; fi',
  // Children marked with this host's token, wherever they moved (setsid, a spawn not yet tracked).
  '  while IFS= read -r -d "" var; do',
  '    [ "$var" = "AGENT_SHELL_OWNER=$token" ] && { kill -KILL "$pid" 2>/dev/null; [ "$pid" = "$3" ] && marked[$3]=1; break; }',
  '  done < "/proc/$pid/environ" 2>/dev/null',
  "done",
  // The whole group of each marked group leader too: a member forked after the scan began (a
  // sandbox's namespace init cloned just before its launcher died) would otherwise wait forever.
  'for g in "${!marked[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done',
  "done",
  // Remove the emptied cgroups (a killed process leaves its cgroup a moment later).
  'if [ -n "$cgroot" ]; then for try in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cgroot"/task-*/ "$cgroot" 2>/dev/null; [ -e "$cgroot" ] || break; sleep 0.05; done; fi',
  "exit 0",
].join("\n");

export interface Watchdog {
  track(pgid: number): void;
  untrack(pgid: number): void;
  /** The folder of the host's task cgroups: killed (cgroup.kill) and removed when the host dies. */
  cgroupRoot(path: string): void;
  /**
   * Says the host closed cleanly: it ended every process itself and starts none after this
   * (a later track() withdraws it). The watchdog then makes one pass at EOF, not four.
   */
  closedCleanly(): void;
  /** The watchdog's own pid (tests use it to simulate a whole-tree SIGKILL). */
  readonly pid: number;
}

let instance: Watchdog | null = null;

export function watchdog(): Watchdog {
  instance ??= startWatchdog();
  return instance;
}

/** The host closed cleanly (Watchdog.closedCleanly); nothing is said where no watchdog runs. */
export function watchdogClosedCleanly(): void {
  instance?.closedCleanly();
}

function startWatchdog(): Watchdog {
  // A real pipe written synchronously: an `add` is in the kernel before track() returns,
  // so a SIGKILL right after a spawn cannot lose it in a userspace buffer.
  const [readFd, writeFd] = createPipe();
  const proc = Bun.spawn(["bash", "--noprofile", "--norc", "-c", SCRIPT, "agent-shell-watchdog", OWNER_TOKEN], {
    stdin: readFd,
    stdout: "ignore",
    stderr: "ignore",
    detached: true,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
  });
  closeSync(readFd);
  proc.unref();
  const send = (text: string) => {
    try {
      writeSync(writeFd, text);
    } catch {
      /* the watchdog died: nothing more we can do from here */
    }
  };
  // `add` goes out at once (the host may die any moment); `del`s are batched off the
  // hot path of a call: a stale entry for a moment only names a group that is gone.
  let pendingDel = "";
  const flushDel = () => {
    const text = pendingDel;
    pendingDel = "";
    if (text) send(text);
  };
  return {
    pid: proc.pid,
    track: (pgid) => send(`add ${pgid}\n`),
    cgroupRoot: (path) => send(`cgroot ${path}\n`),
    closedCleanly: () => send("clean -\n"),
    untrack: (pgid) => {
      if (!pendingDel) setImmediate(flushDel);
      pendingDel += `del ${pgid}\n`;
    },
  };
}
