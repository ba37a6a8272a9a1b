import { join } from "node:path";
import { AdoptedProcess } from "../../runtime/local/adopted-process.ts";
import type { Runtime } from "../../runtime/types.ts";
import { groupAlive, isOurGroup } from "../../runtime/process-groups/process-group.ts";
import type { StateBudget } from "../output/state-budget.ts";
import { OutputStream } from "../output/stream.ts";
import type { Registry } from "../tasks/registry.ts";
import type { OwnerFolder } from "./state-dir.ts";
import { Task } from "../tasks/task.ts";
import { bootId, readMetas } from "./task-meta.ts";
import { taskIdNumber } from "../tasks/task-id.ts";

/** What recovery needs to know of the configuration. */
export interface RecoveryOptions {
  bufferBytes: number;
  maxLogBytes: number;
  killGraceMs: number;
  /** Disk cap of all task logs together: recovered logs count in it. */
  budget?: StateBudget;
}

/**
 * A persistent registry starting on a folder whose previous owner died without a clean
 * shutdown takes its tasks back from meta.json: groups still alive are `running`
 * (listed, killable; output after the crash is lost), the others `lost`; finished tasks
 * stay readable. Ids continue after the highest seen.
 */
export function recoverTasks(
  owner: OwnerFolder,
  registry: Registry,
  options: RecoveryOptions,
  /** The runtime of an SSH host, to re-attach remote background tasks (which a restart does not stop). */
  remoteRuntime: (host: string) => Runtime | undefined = () => undefined,
): void {
  let highest = 0;
  const metas = readMetas(owner.dir).sort((a, b) => taskIdNumber(a.meta.task_id) - taskIdNumber(b.meta.task_id));
  for (const { dir, meta } of metas) {
    highest = Math.max(highest, taskIdNumber(meta.task_id));
    const stream = (name: "stdout" | "stderr") =>
      OutputStream.fromLogFile(name, options.bufferBytes, join(dir, `${name}.log`), options.maxLogBytes, options.budget);
    const { kind, command, prompt, description, name, cwd, host, tty } = meta;
    const task = new Task({
      info: { kind, command, prompt, description, name, cwd, host, tty, ...(meta.kept_output ? { kept_output: true as const } : {}) },
      killGraceMs: options.killGraceMs,
      stdout: stream("stdout"),
      stderr: stream("stderr"),
      logDir: dir,
      startedAt: new Date(meta.started_at),
      sandbox: meta.sandbox,
    });
    task.assignId(meta.task_id);
    const remote = meta.status === "running" && meta.host && meta.resume_token && meta.pgid !== null ? remoteRuntime(meta.host) : undefined;
    if (remote?.resume) {
      task.attach(remote.resume(meta.resume_token!, meta.pgid!, { stdout: task.stdout.total, stderr: task.stderr.total }));
    } else if (meta.status === "running") {
      // Adopted only when verifiably the group agent-shell started: a forged meta.json must not make it killable.
      const alive =
        meta.pgid !== null && meta.boot_id === bootId() && !meta.host && groupAlive(meta.pgid) && isOurGroup(meta.pgid, meta.pgid_start, meta.owner_token);
      if (alive) {
        task.attach(new AdoptedProcess(meta.pid ?? meta.pgid!, meta.pgid!));
      } else {
        task.finish("lost", null, "agent-shell stopped without a clean shutdown and the process was gone when it restarted; its output up to then is in the log");
      }
    } else {
      const exit = meta.exit_code === undefined ? null : { code: meta.signal ? null : (meta.exit_code ?? null), signal: meta.signal ?? null };
      task.finish(meta.status, exit, meta.lost_reason, meta.ended_at ? new Date(meta.ended_at) : undefined);
    }
    registry.restore(task);
  }
  registry.continueAfter(highest);
}
