import { z } from "zod";
import { DENIED_KINDS } from "../sandbox/denied.ts";

/**
 * The pieces of the tools' result schemas (their MCP `outputSchema`, SPEC §12). Objects are
 * open (`looseObject`): a result may carry more than is declared here, but never less than
 * the required fields, so `{}` is rejected. Each tool's own schema lives beside the tool.
 *
 * Built on first use: only the published tool list (generated when the binary is built) and
 * tests need result schemas, so a server start does not pay for making them.
 */

function build() {
  const ERROR_CODES = ["NOT_FOUND", "ACCESS_DENIED", "INVALID_ARGUMENT", "IO_ERROR", "TIMEOUT", "BLOCKED"] as const;

  /** SPEC §2: every failure, whatever the tool. */
  const errorResult = z.looseObject({
    error: z.string().describe("What went wrong and what to do."),
    error_code: z.enum(ERROR_CODES),
    context: z.looseObject({}).describe("The request's relevant arguments and any partial output."),
  });

  /** A call that must be approved first (a caution command, or a looser sandbox). */
  const needsConfirmation = z.looseObject({
    needs_confirmation: z.literal(true),
    message: z.string().describe("What needs approval; call again with confirmed: true after the user agrees."),
    command: z.string().optional(),
    prompt: z.string().optional(),
    description: z.string().optional(),
  });

  /** Where a task ran: `sandbox`, `sandbox_level` and `sandbox_denied` (SPEC §11, §25). */
  const sandboxShape = {
    sandbox: z.string().optional().describe("The sandbox mode applied: workspace-write, read-only, off, remote or unavailable."),
    sandbox_level: z.string().optional(),
    sandbox_notes: z.array(z.string()).optional().describe("What this sandbox level cannot hold, and config it could not apply (once per connection)."),
    sandbox_denied: z
      .object({ kind: z.enum(DENIED_KINDS), paths: z.array(z.string()), hint: z.string() })
      .optional()
      .describe("A failure the sandbox caused: what it refused (kind), where, and how to proceed."),
    network_denied: z
      .array(z.object({ host: z.string(), port: z.number().int(), reason: z.string() }))
      .optional()
      .describe("Connections agent-shell's proxy refused while the command ran; sandbox_denied (kind network) says how to allow one."),
    git_disarmed: z
      .array(z.looseObject({ repository: z.string(), key: z.string(), value: z.string(), restore: z.string() }))
      .optional()
      .describe("git settings or hooks the command wrote that would run a program outside the sandbox, disarmed; `restore` is the line a person runs to keep one."),
    control_files_restored: z.array(z.string()).optional().describe("Control files (shell startup files, harness settings, agent-shell's config) the command made or changed, put back as they were."),
  };

  /** A stream's text as results show it, with its truncation and log-file fields. */
  const streamShape = {
    stdout_truncated: z.boolean().optional(),
    stderr_truncated: z.boolean().optional(),
    stdout_path: z.string().optional(),
    stderr_path: z.string().optional(),
    spool_error: z.string().optional(),
    stdout_total_bytes: z.number().int().optional(),
    stderr_total_bytes: z.number().int().optional(),
    output_task_id: z.string().optional().describe("A task holding the full output: read omitted ranges with task_output offset/length."),
  };

  /** How a task ended: exit_code (-1 with `signal` when a signal ended it). */
  const exitShape = {
    exit_code: z.number().int().nullable().optional(),
    signal: z.string().optional(),
  };

  /** A tty task's screen, and the prompt it waits at. */
  const interactiveShape = {
    screen: z.string().optional(),
    waiting_for_input: z.boolean().optional(),
    prompt: z.string().optional(),
  };

  const taskStatus = z.enum(["running", "completed", "killed", "lost"]);

  /** The full output of a finished foreground run. */
  const runOutputShape = {
    stdout: z.string(),
    stderr: z.string(),
    ...streamShape,
  };

  /** task_output's view of one task. */
  const taskView = z.looseObject({
    task_id: z.string(),
    ...streamShape,
    task_type: z.literal("background"),
    kind: z.string(),
    status: taskStatus,
    host: z.string().optional(),
    stdout: z.string().optional().describe("Absent only in a range read of stderr."),
    stderr: z.string().optional(),
    ...exitShape,
    lost_reason: z.string().optional(),
    note: z.string().optional(),
    stdout_total_bytes: z.number().int(),
    stderr_total_bytes: z.number().int(),
    next_offset: z.number().int().optional().describe("A range read returned one page: read on from here."),
    duration_ms: z.number(),
    ...interactiveShape,
    ...sandboxShape,
  });
  return { errorResult, needsConfirmation, sandboxShape, streamShape, exitShape, interactiveShape, taskStatus, runOutputShape, taskView };
}

let built: ReturnType<typeof build> | undefined;

export const resultShapes = () => (built ??= build());
