import { realpathSync } from "node:fs";
import { restartTask } from "../tools/services/restart-task.ts";
import { resolve } from "node:path";
import { defaultMaxStateBytes, StateBudget } from "../background/output/state-budget.ts";
import { defaultStateDir, OwnerFolder, recoverTasks } from "../background/state/index.ts";
import { Launcher, Registry, type Task } from "../background/tasks/index.ts";
import { awaitOutputNews } from "../background/watch/index.ts";
import { type Config, ConfigSchema } from "../config/schema.ts";
import { isLoadedConfig } from "../config/load.ts";
import { CodedError, type ErrorResult, invalidArgument, type ToolResult } from "../errors.ts";
import { within } from "../first-of.ts";
import { LocalRuntime } from "../runtime/local/local.ts";
import { SshHosts } from "../runtime/ssh/runtime.ts";
import type { SshTarget } from "../runtime/ssh/connection/connection.ts";
import { usesFarAgent } from "../runtime/far/way-in.ts";
import { FarHosts } from "./far/far-hosts.ts";
import { splitId } from "./far/task-ids.ts";
import { type GroupRead, readAcrossHosts } from "./far/across-hosts.ts";
import { type Sandbox, sandboxFromConfig } from "../sandbox/setup.ts";
import { closeSpawners, warmSpawner } from "../runtime/local/served-spawn.ts";
import { endShellSnapshots, userShell } from "../runtime/shell-snapshot/shell-snapshot.ts";
import { Sessions } from "../tools/sessions.ts";
import { closeKeptSandboxes, keepSandboxesForTasks } from "../runtime/containment/kept-sandbox.ts";
import { configureHelper } from "../runtime/spawn-helper/helper-binary.ts";
import { TaskCgroup } from "../runtime/containment/task-cgroup.ts";
import { PidsLimit } from "../runtime/containment/pids-limit.ts";
import type { SandboxMode } from "../sandbox/policy.ts";
import type { Runtime } from "../runtime/types.ts";
import { watchdog, watchdogClosedCleanly } from "../runtime/process-groups/watchdog.ts";
import type { ConfirmationPolicy } from "../safety/confirmation/command-guard.ts";
import { PendingConfirmations } from "../safety/confirmation/confirmations.ts";
import { allowedRoots } from "../safety/paths.ts";
import { TOOLS } from "../tools/index.ts";
import { taskEndEvent } from "../tools/results/present.ts";
import type { ToolContext, ToolDefinition } from "../tools/types.ts";
import type { ToolInfo } from "./tool-list.ts";
import { toolList } from "./tool-list.ts" with { type: "macro" };
import { fromZodError } from "./invalid-arguments.ts";
import { capResultSize } from "./result-size.ts";
import { type AuditEntry, AuditLog, auditEntry, auditFile, type Connection } from "../audit/audit-log.ts";
import { otelExporter } from "../audit/otel.ts";
import { parserReady } from "../safety/parser/bash-parser.ts";
import type { CallNote } from "../safety/confirmation/call-note.ts";
import { projectRules } from "../safety/rules/project-rules.ts";
import { compileRules } from "../safety/rules/rules.ts";

export interface HostOptions {
  /** Working directory of the tools. (default: process.cwd()) */
  cwd?: string;
  /** Effective configuration (already merged from file, env and flags). */
  config?: Partial<Config>;
  confirmationPolicy?: ConfirmationPolicy;
  /**
   * Persistent registry (daemon, `mcp --persist`): the state dir itself is the owner
   * folder, locked while alive; tasks of a previous owner that died are recovered.
   */
  persist?: boolean;
  /**
   * false: commands start from this process's own environment, never a snapshot of the
   * user's shell (SPEC §23) — a person's `run` and `call` already have theirs.
   */
  userShell?: boolean;
}

export interface CallOptions {
  signal?: AbortSignal;
  progress?: (progress: number, message: string) => void;
  /** Told about each task the call launches (see ToolContext.onTask). */
  onTask?: (task: Task) => void;
  /** The caller's own pending confirmations (one per MCP connection); the host's when absent. */
  confirmations?: PendingConfirmations;
  /** Who confirms this caller's calls (an MCP connection's person, SPEC §19); the host's policy when absent. */
  confirmationPolicy?: ConfirmationPolicy;
  /** When (Date.now() ms) the caller gives up waiting (its client's tool timeout, SPEC §23). */
  answerBy?: number;
  /** Where this caller may run commands (a daemon connection's); the host's cwd and roots when absent. */
  scope?: CallScope;
  /** Who is calling, for the audit record (a library caller when absent). */
  connection?: Connection;
}

/** A caller's working directory and allowed roots (no roots: it may run no local command), and its sandbox mode. */
export interface CallScope {
  cwd: string;
  allowedRoots: string[];
  /** The default mode of this caller's commands (the server's when absent); never looser than the server's. */
  sandbox?: SandboxMode;
  /** A looser default this caller asked for: applied call by call, each confirmed (SPEC §20). */
  requestedSandbox?: SandboxMode;
  /** Who confirms this caller's calls and how long its person has (SPEC §19); the server's config when absent. */
  confirm?: Pick<Config, "confirm_by" | "confirm_timeout_seconds">;
  /** This caller's client's own tool timeout (SPEC §23); the server's config when absent. */
  clientTimeoutSeconds?: number;
}

/** Where a followed task's output stands (the daemon's `await_output`). */
export type OutputPosition = {
  found: boolean;
  running: boolean;
  stdout_total: number;
  stderr_total: number;
};

/** How long close() lets killed remote tasks remove their remote files over the pool. */
const REMOTE_CLEANUP_MS = 3000;

/**
 * Configuration + registry + runtimes + tools: the one core behind the MCP server, the
 * CLI and the library. None of those faces re-implements a tool, and none reaches past
 * this class into the registry: what they need of it is offered here.
 */
export class ToolHost {
  readonly config: Config;
  readonly cwd: string;
  private readonly registry: Registry;
  readonly sandbox: Sandbox;
  private readonly owner: OwnerFolder;
  private readonly sshHosts: SshHosts;
  /** Hosts reached through agent-shell on the far side (SPEC §16): their calls are forwarded there. */
  readonly farHosts: FarHosts;
  private readonly base: Omit<ToolContext, "signal" | "progress">;
  private readonly shutdown = new AbortController();
  private readonly byName = new Map<string, ToolDefinition>(TOOLS.map((t) => [t.name, t]));
  private closing: Promise<void> | null = null;
  private readonly persistent: boolean;
  /** Whether local commands start from the user's shell (SPEC §23). */
  private readonly snapshotted: boolean;
  /** Whether prepare() has run. */
  private prepared = false;
  /** Observers of every call (SPEC §22): the audit file, and OpenTelemetry when configured. */
  private readonly observers: ((entry: AuditEntry) => void)[] = [];
  private readonly telemetry = otelExporter(process.env);
  /** Callers already told the sandbox's notes (withSandboxNotes). */
  private readonly notesSaid = new WeakSet<object>();
  /** The result of each call run as an MCP task, by its task (gone with the task). */
  private readonly callResults = new WeakMap<Task, { result: Promise<ToolResult>; settled: boolean }>();

  constructor(options: HostOptions = {}) {
    this.config = isLoadedConfig(options.config) ? options.config : ConfigSchema.parse(options.config ?? {});
    this.cwd = realpathSync(resolve(options.cwd ?? process.cwd()));
    const config = this.config;
    this.snapshotted = config.shell_snapshot && options.userShell !== false;
    const roots = allowedRoots(this.cwd, config.allowed_paths);
    const stateRoot = resolve(config.state_dir ?? defaultStateDir());
    // Before anything starts: an explicitly requested mode this machine cannot provide is fatal.
    this.sandbox = sandboxFromConfig(config, { mode: config.sandbox, allowedRoots: roots, stateRoot, defaultStateRoot: defaultStateDir() });
    this.persistent = options.persist === true;
    keepSandboxesForTasks(this.persistent);
    configureHelper(stateRoot);
    this.owner = OwnerFolder.open(stateRoot, this.persistent);
    this.registry = new Registry({ taskTtlMs: config.task_ttl_seconds * 1000, maxFinishedTasks: config.max_finished_tasks, owner: this.owner });
    const sshOnly = Object.entries(config.hosts).filter(([, h]) => !usesFarAgent(h));
    this.sshHosts = new SshHosts(Object.fromEntries(sshOnly) as Record<string, SshTarget>, config.kill_grace_seconds);
    this.farHosts = new FarHosts(config.hosts, config);
    const maxStateBytes = config.max_state_bytes ?? defaultMaxStateBytes(stateRoot);
    const budget = new StateBudget(maxStateBytes, (bytes) => this.registry.freeLogSpace(bytes, maxStateBytes));
    const streams = { bufferBytes: config.background_buffer_bytes, maxLogBytes: config.max_log_bytes, killGraceMs: config.kill_grace_seconds * 1000, budget };
    if (options.persist) recoverTasks(this.owner, this.registry, streams, (host) => this.sshHosts.runtime(host));
    const configRules = compileRules(config.rules, "config");
    const launcher = new Launcher(this.registry, this.owner, {
      ...streams,
      // Spooling starts while memory still holds every earlier byte (its head half).
      foregroundSpoolAfter: Math.min(config.max_output_bytes, Math.floor(config.background_buffer_bytes / 2)),
      foregroundLogTtlMs: config.task_ttl_seconds * 1000,
    });
    this.base = {
      config,
      cwd: this.cwd,
      allowedRoots: roots,
      registry: this.registry,
      launcher,
      runtime: new LocalRuntime(),
      runtimeFor: (host) => this.remoteRuntime(host),
      confirmations: new PendingConfirmations(),
      sandbox: this.sandbox,
      sandboxMode: this.sandbox.mode,
      confirmationPolicy: options.confirmationPolicy ?? { kind: "pending" },
      userShell: () => (this.snapshotted ? userShell() : null),
      sessions: new Sessions(),
      rules: () => {
        const project = projectRules(this.cwd).rules;
        return project.length ? [...configRules, ...project] : configRules;
      },
    };
    if (config.audit) {
      const log = new AuditLog(auditFile(stateRoot), config.audit_max_bytes);
      this.observers.push((entry) => log.record(entry));
    }
    if (this.telemetry) this.observers.push(this.telemetry.export);
    openHosts++;
    // A persistent registry recovers running tasks: everything is ready before it serves.
    if (this.persistent) this.prepare();
  }

  /**
   * What only a call needs, made once: the watchdog, up before the first child so no spawn
   * is ever unwatched, and the tasks' limits with the end of what outlived dead hosts (SPEC
   * §20). ~3–5 ms (a bash to spawn, cgroup folders to sweep): the MCP server does it once
   * the client has been answered initialize, so a harness waits less for the server to
   * start; a call made before that does it first.
   */
  prepare(): void {
    if (this.prepared) return;
    this.prepared = true;
    watchdog();
    TaskCgroup.configure({ persistent: this.persistent });
    PidsLimit.configure({ maxProcesses: this.config.max_processes, persistent: this.persistent });
    // The user's shell starts now, off the first call's path (it may take a while: rc files).
    if (this.snapshotted) void userShell();
  }

  /**
   * Makes ready what a first command in the server's own directory waits for (~40 ms here):
   * the `bash` tool's schema, and the default policy's kept sandbox and spawner. The MCP
   * server calls it while the client is still busy with the answers to initialize and
   * tools/list; a command that comes earlier shares what is being made (served-spawn.ts).
   */
  warm(): void {
    if (this.closing) return;
    this.prepare();
    void parserReady(); // the bash grammar, loaded before the first command needs it
    void TOOLS.find((t) => t.name === "bash")?.schema;
    const mode = this.sandbox.mode;
    if (mode !== "off" && this.sandbox.unavailable) return;
    const call = mode === "off" ? null : this.sandbox.forCall(mode, { cwd: this.cwd, roots: this.base.allowedRoots });
    warmSpawner(call?.run ?? null, this.cwd);
  }

  /** Names, descriptions and JSON Schemas (generated from the zod schemas when the binary is built). */
  get tools(): ToolInfo[] {
    return TOOL_LIST;
  }

  /**
   * Runs a tool; always resolves to a result object. The one place where a failure — a
   * CodedError thrown anywhere below, or anything unexpected — becomes the SPEC's error shape.
   */
  async call(name: string, args: unknown, options: CallOptions = {}): Promise<ToolResult> {
    const startedAt = performance.now();
    const note: CallNote = {};
    const caller = options.confirmations ?? this.base.confirmations;
    let result: ToolResult;
    try {
      result = capResultSize(withoutNulls(this.withSandboxNotes(await this.run(name, args, options, note), caller)));
    } catch (e) {
      result = capResultSize(withoutNulls(this.withSandboxNotes(errorShape(e, name), caller)));
    }
    // Every call of every face passes here: its record is made before the result is returned.
    if (this.observers.length) {
      const entry = auditEntry({ tool: name, args, connection: options.connection ?? { transport: "library" }, cwd: options.scope?.cwd ?? this.cwd, note, result, startedAt });
      for (const observe of this.observers) observe(entry);
    }
    return result;
  }

  /**
   * The sandbox's notes (what its level cannot hold, config not in force) go on a caller's
   * first result that says a sandbox level, not on every one (SPEC §25). A caller is known
   * by its pending confirmations: one per MCP connection (createMcpServer), else the host's.
   */
  private withSandboxNotes(result: ToolResult, caller: object): ToolResult {
    if (this.notesSaid.has(caller)) return result;
    const context = result.context as Record<string, unknown> | undefined;
    const where = typeof result.sandbox_level === "string" ? result : typeof context?.sandbox_level === "string" ? context : null;
    if (!where) return result;
    this.notesSaid.add(caller);
    const notes = this.sandbox.notes(where.sandbox_level as string);
    if (notes.length) where.sandbox_notes = notes;
    return result;
  }

  private run(name: string, args: unknown, options: CallOptions, note?: CallNote): Promise<ToolResult> {
    this.prepare();
    const tool = this.byName.get(name);
    if (!tool) {
      throw new CodedError("INVALID_ARGUMENT", `Unknown tool '${name}'. Known tools: ${[...this.byName.keys()].join(", ")}`, { tool: name });
    }
    if (this.closing) throw new CodedError("IO_ERROR", "The server is shutting down", { tool: name });
    const given = withAliases(args ?? {}, tool.aliases);
    const parsed = tool.schema.safeParse(given);
    if (!parsed.success) throw fromZodError(name, parsed.error, given, parameterNames(tool.schema));
    const signal = options.signal ? AbortSignal.any([options.signal, this.shutdown.signal]) : this.shutdown.signal;
    const raw = given as Record<string, unknown>;
    const host = (parsed.data as { host?: unknown }).host;
    if (typeof host === "string" && !Object.hasOwn(this.config.hosts, host)) throw this.unknownHost(name, host);
    const far = this.farHosts.route(name, raw);
    if (far && "groups" in far) {
      // task_ids on several hosts: each host reads its own, combined here.
      const read: GroupRead = (g, a, sig) =>
        g.host ? this.farHosts.forward(this.farHosts.toFar(name, g.host, a), { signal: sig }) : this.run(name, a, { ...options, signal: sig });
      return readAcrossHosts(far.groups, parsed.data as Record<string, unknown>, read, signal);
    }
    if (far) return this.farHosts.forward(far, { signal, progress: options.progress });
    const scope = options.scope;
    if (scope && scope.allowedRoots.length === 0 && RUNS_COMMANDS.has(name) && (parsed.data as { host?: string }).host === undefined) {
      throw new CodedError(
        "ACCESS_DENIED",
        "This connection declared no working directory and the daemon has no allowed_paths: it may run no local command. Connect through the agent-shell CLI (or `agent-shell mcp --shared`), or set allowed_paths in the daemon's config.",
        { tool: name },
      );
    }
    const where = scope
      ? { cwd: scope.cwd, allowedRoots: scope.allowedRoots, sandboxMode: scope.sandbox ?? this.sandbox.mode, requestedSandboxMode: scope.requestedSandbox }
      : {};
    const ctx = {
      ...this.base,
      ...where,
      signal,
      progress: options.progress,
      onTask: options.onTask,
      answerBy: options.answerBy,
      confirmations: options.confirmations ?? this.base.confirmations,
      confirmationPolicy: options.confirmationPolicy ?? this.base.confirmationPolicy,
      note,
    };
    if (name === "task_list" && host === undefined) return this.withFarTasks(tool.run(parsed.data, ctx), given as Record<string, unknown>, signal);
    return tool.run(parsed.data, ctx);
  }

  /** task_list without `host`: the local tasks, then those of every far host this process has used. */
  private async withFarTasks(local: Promise<ToolResult>, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    const [here, far] = await Promise.all([local, this.farHosts.usedHostsTasks(args, { signal })]);
    return far.length ? { ...here, tasks: [...(here.tasks as ToolResult[]), ...far] } : here;
  }

  /**
   * Runs a call as an MCP task (SPEC §12). Resolves as soon as the call has launched its
   * process, which is then a registry task (`bg-N`, visible to task_output, kill_shell and
   * task_list); `result` settles with exactly what the call returns in the foreground. A
   * call that ends before launching anything (a refusal, needs_confirmation) resolves
   * with its result alone.
   */
  async callAsTask(name: string, args: unknown, options: CallOptions = {}): Promise<{ task: Task; result: Promise<ToolResult> } | { result: ToolResult }> {
    this.prepare();
    const host = (args as { host?: unknown } | null)?.host;
    if (typeof host === "string" && this.farHosts.isFar(host)) {
      const message = `A call for host '${host}' cannot run as an MCP task (its tasks live in the far side's registry): call it with run_in_background: true instead, and read '${host}:bg-N' with task_output`;
      return { result: new CodedError("INVALID_ARGUMENT", message, { host }).toResult() };
    }
    let launched!: (task: Task) => void;
    const started = new Promise<Task>((resolve) => (launched = resolve));
    const result = this.call(name, args, {
      ...options,
      onTask: (task) => {
        if (task.id === null) this.base.launcher.adopt(task);
        launched(task);
        options.onTask?.(task);
      },
    });
    const first = await Promise.race([started.then((task) => ({ task })), result.then((r) => ({ result: r }))]);
    if (!("task" in first)) return first;
    const entry = { result, settled: false };
    this.callResults.set(first.task, entry);
    void result.then(() => (entry.settled = true));
    return { task: first.task, result };
  }

  /** A background task by id (not by name: MCP task ids are exact). */
  findTask(id: string): Task | undefined {
    return this.registry.get(id);
  }

  /** Every background task, ordered by id. */
  listTasks(): Task[] {
    return this.registry.list();
  }

  /**
   * What a task's call returned: the foreground result of a call run as an MCP task, else
   * (a task started with run_in_background or background) its task_output once it ended.
   */
  async taskResult(task: Task): Promise<ToolResult> {
    const own = this.callResults.get(task);
    if (own) return own.result;
    await task.ended;
    return this.call("task_output", { task_id: task.id });
  }

  /** Whether the call behind a task has its result (an MCP task stays `working` until then). */
  hasSettled(task: Task): boolean {
    return !task.running && (this.callResults.get(task)?.settled ?? true);
  }

  /** Called with the `task_finished` notice of each background task when it ends. */
  onTaskEnd(listener: (event: Record<string, unknown>) => void): () => void {
    return this.registry.onTaskEnd((task) => listener(taskEndEvent(task)));
  }

  /** Notices about tasks (output watches) for whoever relays them, e.g. as MCP log messages. */
  onNotice(listener: (data: Record<string, unknown>) => void): () => void {
    const offs = [this.registry.onNotice(listener), this.farHosts.onNotice(listener)];
    return () => offs.forEach((off) => off());
  }

  hasRunningTasks(): boolean {
    return this.registry.list().some((t) => t.running);
  }

  /** Resolves once a task has output past the offsets, or has ended, or after `timeoutMs`. */
  async awaitOutput(taskId: string, offsets: { stdout: number; stderr: number }, timeoutMs: number, signal: AbortSignal): Promise<OutputPosition> {
    const far = splitId(taskId, this.farHosts.isFar);
    if (far) return this.farHosts.awaitOutput(far.host, far.id, offsets, timeoutMs, signal);
    const task = this.registry.resolve(taskId);
    if (!task) return { found: false, running: false, stdout_total: 0, stderr_total: 0 };
    const news = await awaitOutputNews(task, offsets, timeoutMs, signal);
    return { found: true, running: news.running, stdout_total: news.stdoutTotal, stderr_total: news.stderrTotal };
  }

  /** Restarts a background task in place (the CLI's `restart` verb, through the daemon). */
  async restart(ref: string, signal?: AbortSignal): Promise<ToolResult> {
    try {
      if (this.closing) throw new CodedError("IO_ERROR", "The server is shutting down", { task_id: ref });
      const all = signal ? AbortSignal.any([signal, this.shutdown.signal]) : this.shutdown.signal;
      return await restartTask({ ...this.base, signal: all }, ref);
    } catch (e) {
      return errorShape(e, "restart");
    }
  }

  private remoteRuntime(host: string): Runtime {
    const runtime = this.sshHosts.runtime(host);
    if (runtime) return runtime;
    throw this.unknownHost("bash", host);
  }

  /** Hosts come only from the configuration: any other name is refused, listing the configured ones. */
  private unknownHost(tool: string, host: string): CodedError {
    const known = Object.keys(this.config.hosts).sort();
    return invalidArgument(
      tool,
      "host",
      `unknown host '${host}'. ` +
        (known.length ? `Configured hosts: ${known.join(", ")}` : "No hosts are configured (add a [hosts.NAME] table to the config file)"),
      { host, known_hosts: known },
    );
  }

  /** Terminates everything still running (foreground and background) and removes private state. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.shutdown.abort();
      await this.registry.shutdown();
      // Killed remote tasks still remove their remote files over the pool: let them.
      if (this.sshHosts.active) await within(Promise.all(this.registry.list().map((t) => t.ended)), REMOTE_CLEANUP_MS);
      await this.sshHosts.close();
      await this.farHosts.close();
      closeSpawners();
      this.base.sessions.close();
      await endShellSnapshots();
      closeKeptSandboxes({ kill: !this.owner.persistent });
      this.owner.close();
      await this.telemetry?.shutdown();
      if (--openHosts === 0) watchdogClosedCleanly();
    })();
    return this.closing;
  }
}

/** Hosts not yet closed in this process: the watchdog hears of a clean close when the last one is. */
let openHosts = 0;

/** The published tools (a tools/list answer is the same for every caller). */
const TOOL_LIST: ToolInfo[] = toolList();

/** Tools that start local processes: refused to a connection with nowhere to run them. */
const RUNS_COMMANDS = new Set(["bash", "task"]);

/**
 * Results carry nothing empty (SPEC §15): a field whose value is null is left out, at any
 * depth. Most results have no null at all; those are returned as they are, uncopied.
 */
function withoutNulls<T>(value: T): T {
  return hasNull(value) ? copyWithoutNulls(value) : value;
}

function hasNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== "object") return false;
  if (Array.isArray(value)) {
    for (const item of value) if (hasNull(item)) return true;
    return false;
  }
  for (const key in value) if (Object.hasOwn(value, key) && hasNull((value as Record<string, unknown>)[key])) return true;
  return false;
}

function copyWithoutNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyWithoutNulls) as T;
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = copyWithoutNulls(v);
  return out as T;
}

/** A call's arguments with old parameter names (a tool's aliases) under their current names. */
function withAliases(args: unknown, aliases: Record<string, string> | undefined): unknown {
  if (!aliases || typeof args !== "object" || args === null || Array.isArray(args)) return args;
  const out: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const [old, current] of Object.entries(aliases)) {
    if (old in out && !(current in out)) out[current] = out[old];
    delete out[old];
  }
  return out;
}

/** The parameters a tool's schema knows (for naming the one meant by an unknown one). */
function parameterNames(schema: unknown): string[] {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

function errorShape(e: unknown, tool: string): ErrorResult {
  if (e instanceof CodedError) return e.toResult();
  return { error: `${tool} failed: ${(e as Error)?.message ?? String(e)}`, error_code: "IO_ERROR", context: { tool } };
}

