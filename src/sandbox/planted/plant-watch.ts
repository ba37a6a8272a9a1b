import { type FSWatcher, watch } from "node:fs";
import { join } from "node:path";
import { type ControlState, controlState, restoreControlFiles } from "./control-guard.ts";
import { disarmGit, type GitDisarmed, gitDirs, type GitState, gitState } from "./git-guard.ts";
import type { SandboxLevel, SandboxPolicy } from "../policy.ts";

/**
 * What a sandboxed command plants where the mounts cannot stop it — in git's control files
 * (git-guard.ts), or a control file made or (Landlock) changed (control-guard.ts) — is undone
 * as soon as the file changes, not only when the command ends (SPEC §25, §26): a background
 * task that writes `core.fsmonitor` and sleeps must not leave it armed while the person runs
 * git. While commands of a policy run, every git dir below its roots (and its hooks folder)
 * is watched from outside with inotify; a change runs a pass against the state before the
 * oldest of those commands started. A pass every few seconds catches the rest (repositories
 * made meanwhile, control files).
 */
export interface PlantReport {
  git: GitDisarmed[];
  /** Control files put back as they were (or removed: made by the command). */
  controls: string[];
}

interface Command {
  before: GitState;
  controls: ControlState;
  report: PlantReport;
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
    this.undo(command);
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
    this.undo(oldest);
    this.watchRepositories();
  }

  /** Undoes what was planted since `since` started; every running command is told. */
  private undo(since: Command): void {
    const git = disarmGit(this.policy, this.level, since.before);
    const controls = since.controls.size ? restoreControlFiles(this.policy, since.controls) : [];
    if (git.length === 0 && controls.length === 0) return; // (a thousand commands ending at once: nothing to tell each)
    for (const c of new Set([...this.commands, since])) {
      c.report.git.push(...git);
      c.report.controls.push(...controls);
    }
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
 * Starts guarding one command under `policy`: the state is taken now, before the command is
 * sent off (taken once it had started, it could already hold what the command planted). What
 * is undone while it runs and when it ends goes to `report`. Returns what ends the guard, to
 * be called once the command has exited.
 */
export function guardPlants(policy: SandboxPolicy, level: SandboxLevel, report: PlantReport): () => void {
  const command: Command = { before: gitState(policy, level), controls: controlState(policy, level), report };
  let guarding = watches.get(policy);
  if (!guarding) watches.set(policy, (guarding = new PolicyWatch(policy, level)));
  guarding.add(command);
  const owner = guarding;
  return () => owner.end(command);
}
