import { type FSWatcher, watch } from "node:fs";
import { join } from "node:path";
import { disarmGit, type GitDisarmed, gitDirs, type GitState, gitState } from "./git-guard.ts";
import type { SandboxLevel, SandboxPolicy } from "./policy.ts";

/**
 * What a sandboxed command plants in git's control files is disarmed as soon as the file
 * changes, not only when the command ends (SPEC §25): a background task that writes
 * `core.fsmonitor` and sleeps must not leave it armed while the person runs git. While
 * commands of a policy run, every git dir below its roots (and its hooks folder) is watched
 * from outside with inotify; a change runs a disarm pass against the state before the oldest
 * of those commands started. A look every few seconds catches repositories made meanwhile.
 */
interface Command {
  before: GitState;
  report: GitDisarmed[];
}

/** How often the repositories are looked for again while commands run (a new one may have been made). */
const RESCAN_MS = 2000;
/** Events within this long of each other make one pass (git writes a lock file, then renames it). */
const SETTLE_MS = 5;

class PolicyWatch {
  readonly commands: Command[] = [];
  private readonly watchers = new Map<string, FSWatcher>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private pending: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly policy: SandboxPolicy,
    private readonly level: SandboxLevel,
  ) {}

  add(command: Command): void {
    this.commands.push(command);
    if (this.commands.length === 1) {
      this.timer = setInterval(() => this.pass(), RESCAN_MS);
      this.timer.unref?.();
    }
    this.watchRepositories();
  }

  /** The command ended: a last pass against its own state, then the watch goes when no command is left. */
  end(command: Command): void {
    this.report(disarmGit(this.policy, this.level, command.before));
    const at = this.commands.indexOf(command);
    if (at >= 0) this.commands.splice(at, 1);
    if (this.commands.length > 0) return;
    if (this.timer) clearInterval(this.timer);
    if (this.pending) clearTimeout(this.pending);
    this.timer = this.pending = null;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    watches.delete(this.policy);
  }

  private pass(): void {
    this.pending = null;
    const oldest = this.commands[0];
    if (!oldest) return;
    this.report(disarmGit(this.policy, this.level, oldest.before));
    this.watchRepositories();
  }

  private report(disarmed: GitDisarmed[]): void {
    if (disarmed.length === 0) return;
    for (const c of this.commands) c.report.push(...disarmed);
  }

  private watchRepositories(): void {
    const wanted = new Set(gitDirs(this.policy.workspaceRoots).flatMap((d) => [d, join(d, "hooks")]));
    for (const [dir, w] of this.watchers) {
      if (wanted.has(dir)) continue;
      w.close();
      this.watchers.delete(dir);
    }
    for (const dir of wanted) {
      if (this.watchers.has(dir)) continue;
      try {
        const w = watch(dir, { persistent: false }, () => this.soon());
        w.on("error", () => {
          w.close();
          this.watchers.delete(dir);
        });
        this.watchers.set(dir, w);
      } catch {} // not there (a hooks folder not made yet): the rescan covers it
    }
  }

  private soon(): void {
    this.pending ??= setTimeout(() => this.pass(), SETTLE_MS);
  }
}

const watches = new Map<SandboxPolicy, PolicyWatch>();

/**
 * Starts guarding git for one command under `policy`: the state is taken now, before the
 * command is sent off (taken once it had started, it could already hold what the command
 * planted). What is disarmed while it runs and when it ends goes to `report`. Returns what
 * ends the guard, to be called once the command has exited.
 */
export function guardGit(policy: SandboxPolicy, level: SandboxLevel, report: GitDisarmed[]): () => void {
  const command: Command = { before: gitState(policy, level), report };
  let guarding = watches.get(policy);
  if (!guarding) watches.set(policy, (guarding = new PolicyWatch(policy, level)));
  guarding.add(command);
  const owner = guarding;
  return () => owner.end(command);
}
