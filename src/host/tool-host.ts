import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { Launcher } from "../background/tasks/launcher.ts";
import { recoverTasks } from "../background/state/recovery.ts";
import { Registry } from "../background/tasks/registry.ts";
import type { Task } from "../background/tasks/task.ts";
import { defaultStateDir, OwnerFolder } from "../background/state/state-dir.ts";
import { type Config, ConfigSchema } from "../config/schema.ts";
import { LocalRuntime } from "../runtime/local.ts";
import { SshHosts } from "../runtime/ssh/runtime.ts";
import { watchdog } from "../runtime/watchdog.ts";
import { PendingConfirmations } from "../safety/confirmations.ts";
import { canonicalRoot } from "../safety/paths.ts";
import { Sandbox } from "../sandbox/setup.ts";
import { capResultSize } from "./result-size.ts";
import { errorResult, invalidArguments, ToolError, type ToolResult } from "../tools/errors.ts";
import { TOOLS } from "../tools/index.ts";
import type { ConfirmationPolicy, ToolContext, ToolDefinition } from "../tools/types.ts";
import type { Runtime } from "../runtime/types.ts";

export interface ToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

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
}

export interface CallOptions {
  signal?: AbortSignal;
  progress?: (progress: number, message: string) => void;
  /** Told about each task the call launches (see ToolContext.onTask). */
  onTask?: (task: Task) => void;
}

/**
 * Configuration + registry + runtimes + tools: the one core behind the MCP server, the
 * CLI and the library. None of those faces re-implements a tool.
 */
export class ToolHost {
  readonly config: Config;
  readonly cwd: string;
  readonly registry: Registry;
  readonly sandbox: Sandbox;
  private readonly owner: OwnerFolder;
  private readonly launcher: Launcher;
  private readonly sshHosts: SshHosts;
  private readonly base: Omit<ToolContext, "signal" | "progress">;
  private readonly shutdown = new AbortController();
  private readonly byName = new Map<string, ToolDefinition>(TOOLS.map((t) => [t.name, t]));
  private closing: Promise<void> | null = null;

  constructor(options: HostOptions = {}) {
    this.config = ConfigSchema.parse(options.config ?? {});
    this.cwd = realpathSync(resolve(options.cwd ?? process.cwd()));
    const allowedRoots = [this.cwd, ...this.config.allowed_paths.map((p) => canonicalRoot(resolve(this.cwd, expandHome(p))))];
    const stateRoot = resolve(this.config.state_dir ?? defaultStateDir());
    // Before anything starts: an explicitly requested mode this machine cannot provide is fatal.
    this.sandbox = new Sandbox({
      mode: this.config.sandbox,
      writable: this.config.sandbox_writable,
      denyRead: this.config.sandbox_deny_read,
      network: this.config.sandbox_network,
      loopback: this.config.sandbox_network_loopback,
      allowedRoots,
      stateDirs: [stateRoot, defaultStateDir()],
      stateRoot,
    });
    watchdog(); // up before the first child, so no spawn is ever unwatched
    this.owner = OwnerFolder.open(stateRoot, options.persist === true);
    this.registry = new Registry({
      taskTtlMs: this.config.task_ttl_seconds * 1000,
      maxFinishedTasks: this.config.max_finished_tasks,
      owner: this.owner,
    });
    this.sshHosts = new SshHosts(this.config.hosts);
    if (options.persist) recoverTasks(this.owner, this.registry, this.config, (host) => this.sshHosts.runtime(host));
    this.launcher = new Launcher(this.registry, this.owner, this.config);
    this.base = {
      config: this.config,
      cwd: this.cwd,
      allowedRoots,
      registry: this.registry,
      launcher: this.launcher,
      owner: this.owner,
      runtime: new LocalRuntime(),
      runtimeFor: (host) => this.remoteRuntime(host),
      confirmations: new PendingConfirmations(),
      sandbox: this.sandbox,
      confirmationPolicy: options.confirmationPolicy ?? { kind: "pending" },
    };
  }

  /** Names, descriptions and JSON Schemas (generated from the zod schemas). */
  get tools(): ToolInfo[] {
    return TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: jsonSchema(t.schema) }));
  }

  /** Runs a tool; always resolves to a result object (errors use the SPEC's error shape). */
  async call(name: string, args: unknown, options: CallOptions = {}): Promise<ToolResult> {
    const tool = this.byName.get(name);
    if (!tool) {
      return errorResult("INVALID_ARGUMENT", `Unknown tool '${name}'. Known tools: ${[...this.byName.keys()].join(", ")}`, { tool: name });
    }
    if (this.closing) return errorResult("IO_ERROR", "The server is shutting down", { tool: name });
    const parsed = tool.schema.safeParse(args ?? {});
    if (!parsed.success) return invalidArguments(name, parsed.error, args);
    const signal = options.signal ? AbortSignal.any([options.signal, this.shutdown.signal]) : this.shutdown.signal;
    try {
      return capResultSize(await tool.run(parsed.data, { ...this.base, signal, progress: options.progress, onTask: options.onTask }));
    } catch (e) {
      if (e instanceof ToolError) return e.toResult();
      return errorResult("IO_ERROR", `${name} failed: ${(e as Error).message}`, { tool: name });
    }
  }

  private remoteRuntime(host: string): Runtime {
    const runtime = this.sshHosts.runtime(host);
    if (runtime) return runtime;
    const known = this.sshHosts.names;
    throw new ToolError(
      "INVALID_ARGUMENT",
      `Invalid arguments for bash: host: unknown host '${host}'. ` +
        (known.length ? `Known hosts: ${known.join(", ")}` : "No hosts are configured (add a [hosts.NAME] table to the config file)"),
      { host, known_hosts: known },
    );
  }

  /** Terminates everything still running (foreground and background) and removes private state. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.shutdown.abort();
      await this.registry.shutdown();
      // Killed remote tasks still remove their remote files over the pool: let them.
      if (this.sshHosts.active) await Promise.race([Promise.all(this.registry.list().map((t) => t.ended)), Bun.sleep(3000)]);
      await this.sshHosts.close();
      this.owner.close();
    })();
    return this.closing;
  }
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

function expandHome(p: string): string {
  return p === "~" || p.startsWith("~/") ? (process.env.HOME ?? "") + p.slice(1) : p;
}
