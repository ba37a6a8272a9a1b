import type { Config } from "../config/schema.ts";
import type { Runtime, SpawnSpec } from "../runtime/types.ts";
import { OutputStream } from "./output-stream.ts";
import type { Registry } from "./registry.ts";
import type { OwnerFolder } from "./state-dir.ts";
import { Task, type TaskKind } from "./task.ts";
import { join } from "node:path";

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
}

/**
 * Spawns a process and wraps it in a Task with collectors, buffers and spools — the one
 * path shared by foreground and background work of every tool.
 */
export class Launcher {
  constructor(
    private registry: Registry,
    private owner: OwnerFolder,
    private config: Config,
  ) {}

  async launch(req: LaunchRequest): Promise<Task> {
    const id = req.background ? this.registry.allocateId() : null;
    const logDir = id ? this.owner.taskDir(id) : this.owner.nextForegroundDir();
    const spoolAfter = req.background ? 0 : this.config.max_output_bytes;
    const stream = (name: "stdout" | "stderr") =>
      new OutputStream(name, this.config.background_buffer_bytes, {
        path: join(logDir, `${name}.log`),
        maxBytes: this.config.max_log_bytes,
        startAfter: spoolAfter,
      });
    const task = new Task({
      kind: req.kind,
      command: req.command,
      prompt: req.prompt,
      description: req.description,
      name: req.name,
      cwd: req.spec.cwd,
      host: req.host,
      tty: req.spec.tty !== undefined,
      killGraceMs: this.config.kill_grace_seconds * 1000,
      stdout: stream("stdout"),
      stderr: stream("stderr"),
      logDir,
    });
    if (req.background) for (const s of [task.stdout, task.stderr]) s.spool?.open();
    let handle;
    try {
      handle = await req.runtime.spawn(req.spec);
    } catch (e) {
      task.removeLogs();
      throw e;
    }
    task.attach(handle);
    if (id) {
      this.registry.register(task, id);
    } else {
      const untrack = this.registry.trackForeground(task);
      task.onEnd(untrack);
      // Spooled foreground output stays readable through its path for the task TTL.
      task.onEnd(() => {
        if (!task.stdout.spool?.active && !task.stderr.spool?.active) return;
        setTimeout(() => task.removeLogs(), this.config.task_ttl_seconds * 1000).unref?.();
      });
    }
    return task;
  }
}
