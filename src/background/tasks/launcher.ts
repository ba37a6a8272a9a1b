import type { Runtime, SpawnSpec } from "../../runtime/types.ts";
import { OutputStream } from "../output/stream.ts";
import type { StateBudget } from "../output/state-budget.ts";
import type { Registry } from "./registry.ts";
import type { OwnerFolder } from "../state/state-dir.ts";
import { Task, type TaskKind, type TaskSandbox } from "./task.ts";
import { TerminalScreen } from "../terminal/screen.ts";
import { existsSync, renameSync, symlinkSync } from "node:fs";
import { makePrivateDir } from "../state/private-files.ts";
import { dirname, join } from "node:path";
import { recordWriteOrder, WRITE_ORDER_FILE } from "../output/write-order.ts";

export interface LaunchRequest {
  kind: TaskKind;
  command?: string;
  prompt?: string;
  description?: string;
  name?: string;
  host?: string;
  spec: SpawnSpec;
  runtime: Runtime;
  /** Background tasks get an id and spool from the first byte; foreground ones spool only long output. */
  background: boolean;
  /** What containment the spawn gets (reported in every result). */
  sandbox?: TaskSandbox;
}

/** What the launcher needs to know of the configuration. */
export interface LauncherOptions {
  /** Memory kept per stream (head + tail). */
  bufferBytes: number;
  /** Disk cap per log file. */
  maxLogBytes: number;
  /** Disk cap of all task logs together (config max_state_bytes). */
  budget?: StateBudget;
  /** A foreground stream is spooled only beyond this many bytes (what a result can show). */
  foregroundSpoolAfter: number;
  killGraceMs: number;
  /** How long spooled foreground output stays readable through its path. */
  foregroundLogTtlMs: number;
}

/**
 * Spawns a process and wraps it in a Task with collectors, buffers and spools — the one
 * path shared by foreground and background work of every tool.
 */
export class Launcher {
  constructor(
    private registry: Registry,
    private owner: OwnerFolder,
    private options: LauncherOptions,
  ) {}

  async launch(req: LaunchRequest): Promise<Task> {
    const id = req.background ? this.registry.allocateId() : null;
    const logDir = id ? this.owner.taskDir(id) : this.owner.nextForegroundDir();
    const spoolAfter = req.background ? 0 : this.options.foregroundSpoolAfter;
    const stream = (name: "stdout" | "stderr") =>
      new OutputStream(name, this.options.bufferBytes, {
        path: join(logDir, `${name}.log`),
        maxBytes: this.options.maxLogBytes,
        startAfter: spoolAfter,
        budget: this.options.budget,
      });
    const stdout = stream("stdout");
    const ttyOutput = req.spec.tty ? await ttyStreams(req.spec.tty, stdout, logDir, this.options.maxLogBytes, this.options.budget) : undefined;
    const task = new Task({
      info: {
        kind: req.kind,
        command: req.command,
        prompt: req.prompt,
        description: req.description,
        name: req.name,
        cwd: req.spec.cwd,
        host: req.host,
        tty: req.spec.tty !== undefined,
      },
      killGraceMs: this.options.killGraceMs,
      stdout,
      stderr: stream("stderr"),
      logDir,
      ttyOutput,
      keepStdinOpen: req.spec.stdin === "pipe",
      sandbox: req.sandbox,
    });
    let handle;
    try {
      handle = await req.runtime.spawn(req.spec);
    } catch (e) {
      task.removeLogs();
      throw e;
    }
    // A background task's log files exist from launch (SPEC §14: every task_output names them):
    // renamed into place from ones made ahead, or made off the event loop, on another core,
    // while the start is answered (task_output and task_list wait for them). After the spawn,
    // so the process starts sooner. Output that comes first makes its file at once.
    const made = id && !req.spec.tty ? this.owner.makeTaskDir(id) : null;
    const openSpools = () => {
      for (const s of [task.stdout, task.stderr]) s.spool?.open();
    };
    if (made) task.logsReady = made.then(openSpools);
    else if (req.background) openSpools(); // (foreground output is spooled only when long)
    // Merged `logs` need the order of stdout and stderr writes (not for a tty: one stream).
    if (req.background && !req.spec.tty) {
      const order = recordWriteOrder(join(logDir, WRITE_ORDER_FILE), task.stdout, task.stderr);
      task.onEnd(() => order.close()); // reopened on the next write, after a restart in place
    }
    task.attach(handle);
    if (id) {
      this.registry.register(task, id);
      if (!req.spec.tty) task.relaunch = () => req.runtime.spawn(req.spec);
    } else {
      const untrack = this.registry.trackForeground(task);
      task.onEnd(untrack);
      // Spooled foreground output stays readable through its path for the task TTL.
      task.onEnd(() => {
        if (task.id !== null) return; // adopted: the registry owns its logs now
        if (!task.stdout.spool?.active && !task.stderr.spool?.active) {
          // Only a tty's raw log was written: nothing refers to it any more.
          if (task.rawOutput?.spool?.active) task.removeLogs();
          return;
        }
        // A result that left output out registers the ended task (output_task_id): then the registry owns its logs.
        setTimeout(() => task.id === null && task.removeLogs(), this.options.foregroundLogTtlMs).unref?.();
      });
    }
    return task;
  }

  /**
   * An ended foreground task whose result left output out becomes a finished task of the
   * registry (`output_task_id`): its full output stays readable until the task TTL.
   */
  keepEnded(task: Task): string {
    if (task.id !== null) return task.id;
    task.info.kept_output = true;
    const id = this.adopt(task);
    task.finalStatusRead = true; // its result was delivered: the finished-task cap may take it first
    return id;
  }

  /** Starts an ended background task again under its id (restart in place); false if it cannot be. */
  async relaunch(task: Task): Promise<boolean> {
    if (!task.relaunch || task.running || this.registry.shuttingDown || task.id === null) return false;
    const epoch = task.killEpoch;
    const handle = await task.relaunch();
    if (task.killEpoch !== epoch) {
      // Killed while the new process was starting: a kill by the user never restarts.
      handle.signal("SIGKILL");
      handle.dispose();
      return false;
    }
    task.respawn(handle);
    this.registry.revive(task);
    return true;
  }

  /**
   * A running foreground task becomes a background task (background_after_seconds, or a
   * terminal program waiting at a prompt): same process, same streams. Its log folder
   * moves to the task folder, where background logs live (recovery reads them there); a
   * link at the old place keeps the open spools' paths valid.
   */
  adopt(task: Task): string {
    const id = this.registry.allocateId();
    const target = this.owner.taskDir(id);
    if (task.logDir && task.logDir !== target) {
      try {
        makePrivateDir(dirname(target));
        if (existsSync(task.logDir)) renameSync(task.logDir, target);
        else makePrivateDir(target);
        makePrivateDir(dirname(task.logDir));
        symlinkSync(target, task.logDir);
        task.relocateLogs(target);
      } catch {
        /* logs stay where they are: still readable, only not where recovery looks */
      }
    }
    return this.registry.register(task, id);
  }
}

/** Raw PTY bytes are kept in full on disk (tty.raw.log); memory holds only a little. */
const RAW_MEMORY_BYTES = 64 * 1024;

async function ttyStreams(size: { cols: number; rows: number }, stdout: OutputStream, logDir: string, maxLogBytes: number, budget?: StateBudget) {
  const raw = new OutputStream("stdout", RAW_MEMORY_BYTES, { path: join(logDir, "tty.raw.log"), maxBytes: maxLogBytes, startAfter: 0, budget });
  return { raw, screen: await TerminalScreen.create(size.cols, size.rows, stdout) };
}
