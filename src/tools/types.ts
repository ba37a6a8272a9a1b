import type { z } from "zod";
import type { Launcher, Registry, Task } from "../background/tasks/index.ts";
import type { Config } from "../config/schema.ts";
import type { ToolResult } from "../errors.ts";
import type { Runtime } from "../runtime/types.ts";
import type { CallNote } from "../safety/confirmation/call-note.ts";
import type { Rule } from "../safety/rules/rules.ts";
import type { ConfirmationPolicy } from "../safety/confirmation/command-guard.ts";
import type { PendingConfirmations } from "../safety/confirmation/confirmations.ts";
import type { Sandbox } from "../sandbox/setup.ts";
import type { SandboxMode } from "../sandbox/policy.ts";
import type { ShellSnapshot } from "../runtime/shell-snapshot/shell-snapshot.ts";
import type { Sessions } from "./sessions.ts";

/** What a tool may use: the shared mechanisms of one ToolHost. */
export interface ToolContext {
  config: Config;
  /** The server's working directory (canonical). */
  cwd: string;
  /** Canonical allowed roots: cwd plus --allow / allowed_paths. */
  allowedRoots: string[];
  registry: Registry;
  launcher: Launcher;
  runtime: Runtime;
  /** The runtime of a configured SSH host; throws INVALID_ARGUMENT (listing the known hosts) for an unknown name. */
  runtimeFor(host: string): Runtime;
  confirmations: PendingConfirmations;
  /** The server's OS sandbox (SPEC §11): default mode, level, per-call wrappers. */
  sandbox: Sandbox;
  /** This caller's default mode: the server's, or what a daemon connection declared. */
  sandboxMode: SandboxMode;
  /** A looser default this caller asked for (a daemon connection's hello): each call using it is confirmed. */
  requestedSandboxMode?: SandboxMode;
  confirmationPolicy: ConfirmationPolicy;
  /** The user's rules in force now: the config's, then the project's when trusted (SPEC §22). */
  rules(): readonly Rule[];
  /** The call's decision and who confirmed it, for the audit record. */
  note?: CallNote;
  /** Aborted when the caller goes away (MCP cancellation, shutdown). */
  signal: AbortSignal;
  /** Present when the caller asked for progress notifications. */
  progress?: (progress: number, message: string) => void;
  /** Told about each task the call launches, at once (the CLI's `run` streams its output live). */
  onTask?: (task: Task) => void;
  /** The user's login shell, captured once (SPEC §23); null when config shell_snapshot is off. */
  userShell(): ShellSnapshot | null | Promise<ShellSnapshot>;
  /** The server's named sessions (SPEC §23). */
  sessions: Sessions;
  /** When (Date.now() ms) the caller gives up waiting: a foreground command still running then is handed over as a background task. */
  answerBy?: number;
}

/** MCP tool hints, every one stated (MCP's defaults would call a tool destructive and open-world). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  annotations: ToolAnnotations;
  description: string;
  /** The parameters' schema (built at its first use: defineTool). */
  readonly schema: S;
  /** Old parameter names still accepted, each mapped to its current name (not published). */
  aliases?: Record<string, string>;
  /** Parameters for agent-shell's own command line, accepted but left out of tools/list (every request pays for what it lists). */
  unpublished?: string[];
  /** May run as an MCP task (SPEC §12): calls that launch a process whose end is their result. */
  taskSupport?: "optional";
  /** What a successful call returns (its MCP outputSchema adds the error shape), built on demand. */
  result: () => z.ZodType;
  /** Returns the result; a failure is thrown (a CodedError) and shaped by ToolHost.call. */
  run(args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * A tool whose parameters' schema is built at its first use: answering initialize and
 * tools/list (made when the binary is built) builds none, and a start is ~2 ms shorter.
 */
export function defineTool<S extends z.ZodType>(source: Omit<ToolDefinition<S>, "schema"> & { schema: () => S }): ToolDefinition<S> {
  let built: S | undefined;
  return {
    ...source,
    get schema() {
      return (built ??= source.schema());
    },
  };
}
