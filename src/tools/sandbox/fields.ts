import { type ByteSource, decode } from "../../background/output/index.ts";
import type { Task } from "../../background/tasks/index.ts";
import type { TaskSandbox } from "../../background/tasks/task.ts";
import { detectSandboxDenied } from "./denied.ts";

/** How much of the end of each stream is searched for permission errors. */
const SCAN_BYTES = 64 * 1024;

function tailText(stream: ByteSource): string {
  return decode(stream.read(Math.max(0, stream.total - SCAN_BYTES), stream.total) ?? new Uint8Array(0));
}

/**
 * `sandbox` (the mode applied, `remote`, or `unavailable`) and `sandbox_level` for every
 * result about a task; `sandbox_denied {kind, paths, hint}` when a finished sandboxed
 * command failed on something the sandbox refused (SPEC §25). What the level cannot hold
 * (`sandbox_notes`) is said once per connection (ToolHost), not here.
 */
export function sandboxFields(task: Task): Record<string, unknown> {
  const sb = task.sandbox;
  if (!sb) return {};
  const fields: Record<string, unknown> = { sandbox: sb.mode };
  if (sb.level) fields.sandbox_level = sb.level;
  if (sb.planted?.git.length) fields.git_disarmed = sb.planted.git.map((d) => ({ ...d }));
  if (sb.planted?.controls.length) fields.control_files_restored = [...new Set(sb.planted.controls)];
  // What the proxy refused is known, not guessed from the output (SPEC §21); a command may exit 0 on an HTTP 403.
  if (sb.networkDenied?.length) {
    fields.network_denied = sb.networkDenied.map((d) => ({ ...d }));
    fields.sandbox_denied = { kind: "network", paths: [], hint: networkHint(sb.networkDenied) };
  }
  const failed = task.exit !== null && (task.exit.code !== 0 || task.exit.signal !== null);
  if (failed && sb.writableRoots) {
    const denied = deniedOf(task, sb, sb.writableRoots);
    if (denied) fields.sandbox_denied = denied;
  }
  return fields;
}

/**
 * The scan of an ended task's output, kept while its output stays the same: every
 * task_list would otherwise read and search up to 128 KiB of each failed task again.
 */
const scans = new WeakMap<Task, { stdout: number; stderr: number; denied: ReturnType<typeof detectSandboxDenied> }>();

function deniedOf(task: Task, sb: TaskSandbox, writableRoots: string[]): ReturnType<typeof detectSandboxDenied> {
  // A tty task's stdout is its rendered text.
  const stdout = task.terminal?.text ?? task.stdout;
  // (A tty task's rendered text can change without growing: it is scanned each time.)
  const known = task.terminal ? undefined : scans.get(task);
  if (known && known.stdout === stdout.total && known.stderr === task.stderr.total) return known.denied && { ...known.denied, paths: [...known.denied.paths] };
  const denied = detectSandboxDenied({
    output: `${tailText(stdout)}\n${tailText(task.stderr)}`,
    command: task.info.command,
    cwd: task.info.cwd,
    writableRoots,
    hidden: sb.hidden,
    // With the allowlist, the proxy says what it refused (network_denied): a network error is not guessed at.
    network: sb.network !== false || sb.networkDenied !== undefined,
    level: sb.level,
  });
  scans.set(task, { stdout: stdout.total, stderr: task.stderr.total, denied });
  return denied;
}

/** How to allow what was refused: the names for network_allow (a person's choice, never the model's). */
function networkHint(denied: { host: string; port: number }[]): string {
  const names = [...new Set(denied.map((d) => JSON.stringify(d.host)))].join(", ");
  return `agent-shell's network allowlist refused ${names} (network_denied). If the user wants them, they add them to network_allow in agent-shell's config (or set network = "on"); a client that can ask its person is asked instead. Retrying does not help.`;
}
