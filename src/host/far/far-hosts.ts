import type { Config, HostConfig } from "../../config/schema.ts";
import { isErrorResult, type ToolResult } from "../../errors.ts";
import { usesFarAgent } from "../../runtime/far/way-in.ts";
import { SshConnection, type SshTarget } from "../../runtime/ssh/connection/connection.ts";
import { AWAIT_OUTPUT_METHOD, AwaitOutputResultSchema, type AwaitOutputResult } from "../../mcp-extensions/await-output.ts";
import { type CallHooks, FarLink, PipeDroppedError } from "./far-link.ts";
import { farArgs, nearId, nearResult, splitId } from "./task-ids.ts";
import type { IdGroup } from "./across-hosts.ts";
import { escapeControls, farDeadlineMs, ownConfirmation, RateCap } from "./far-answers.ts";

/** A call that runs on a far-side host: which host, and the arguments as the far side takes them. */
export interface FarRoute {
  host: string;
  tool: string;
  args: Record<string, unknown>;
}

/** Notices a far host may relay each second; more are dropped and counted. */
const NOTICES_PER_SECOND = 50;

/** Tools that name a task by id: a far id (`box:bg-3`) sends the call to that host. */
const BY_TASK_ID = new Set(["task_output", "kill_shell", "write_stdin"]);

/**
 * The far-side hosts of the configuration (containers, exec hosts, SSH hosts with
 * `agent = true`) and their links. Calls for them are forwarded whole, as MCP, to the
 * agent-shell running there: no tool is implemented twice.
 */
export class FarHosts {
  private readonly links = new Map<string, FarLink>();
  private readonly listeners = new Set<(data: Record<string, unknown>) => void>();
  /** The connections of SSH hosts with `agent = true` (their channel is the pipe). */
  private readonly sshConnections = new Map<string, SshConnection>();
  private readonly noticeCaps = new Map<string, RateCap>();

  constructor(
    private readonly hosts: Record<string, HostConfig>,
    private readonly limits: Pick<Config, "kill_grace_seconds" | "timeout_seconds">,
  ) {}

  isFar = (name: string): boolean => Object.hasOwn(this.hosts, name) && usesFarAgent(this.hosts[name]!);

  link(name: string): FarLink {
    let link = this.links.get(name);
    if (!link) {
      const cfg = this.hosts[name]!;
      const ssh = () => {
        let conn = this.sshConnections.get(name);
        if (!conn) this.sshConnections.set(name, (conn = new SshConnection(name, cfg as SshTarget, this.limits.kill_grace_seconds)));
        return conn;
      };
      link = new FarLink(name, cfg, ssh, (data) => this.notice(name, data));
      this.links.set(name, link);
    }
    return link;
  }

  /**
   * Which far host a call is for (null: it runs here). task_output's task_ids may name
   * tasks of several hosts: then `groups` says which ids go where.
   */
  route(tool: string, args: Record<string, unknown>): FarRoute | { groups: IdGroup[] } | null {
    if ((tool === "bash" || tool === "task_list") && typeof args.host === "string" && this.isFar(args.host)) {
      const { host, ...rest } = args;
      return { host: host as string, tool, args: rest };
    }
    if (!BY_TASK_ID.has(tool)) return null;
    const ids = typeof args.task_id === "string" ? [args.task_id] : Array.isArray(args.task_ids) ? (args.task_ids as string[]) : [];
    const groups: IdGroup[] = [];
    for (const id of ids) {
      const host = splitId(id, this.isFar)?.host ?? null;
      const group = groups.find((g) => g.host === host) ?? groups[groups.push({ host, ids: [] }) - 1]!;
      group.ids.push(id);
    }
    if (groups.length > 1) return { groups };
    const host = groups[0]?.host;
    if (!host) return null;
    return this.toFar(tool, host, args);
  }

  /** The call as the far side takes it: its own task ids. */
  toFar(tool: string, host: string, args: Record<string, unknown>): FarRoute {
    return { host, tool, args: farArgs(args, (id) => splitId(id, this.isFar)!.id) };
  }

  /** Runs the call on its far host; the result as a local one, plus `host` and near-side ids. */
  async forward(given: FarRoute, hooks: CallHooks): Promise<ToolResult> {
    const link = this.link(given.host);
    await link.connect();
    // bash's time limit made explicit (ours, as for a local call), so the call's deadline is known.
    const timed = given.tool === "bash" && given.args.timeout_seconds === undefined ? { ...given.args, timeout_seconds: this.limits.timeout_seconds } : given.args;
    const route = { ...given, args: withFarHome(timed, link.home) };
    hooks = { ...hooks, deadlineMs: farDeadlineMs(route.tool, route.args, this.limits.kill_grace_seconds) };
    // Reads may be asked again (not only_new: its cursor may have moved on an answer we lost).
    const readOnly = route.tool === "task_list" || (route.tool === "task_output" && route.args.only_new !== true);
    try {
      return explained(route.host, ownConfirmation(route.host, route.args, nearResult(route.host, await link.call(route.tool, route.args, hooks))));
    } catch (e) {
      // A read that met a dying pipe is simply asked again on a new one.
      if (!readOnly || !(e instanceof PipeDroppedError) || hooks.signal?.aborted) throw e;
      return nearResult(route.host, await link.call(route.tool, route.args, hooks));
    }
  }

  /** The tasks of every far host used by this process (task_list without `host`); hosts that cannot be reached are left out. */
  async usedHostsTasks(args: Record<string, unknown>, hooks: CallHooks): Promise<ToolResult[]> {
    const used = [...this.links.values()].filter((l) => l.used);
    const lists = await Promise.all(
      used.map((l) =>
        this.forward({ host: l.name, tool: "task_list", args }, hooks).then(
          (r) => (isErrorResult(r) ? [] : ((r.tasks as ToolResult[]) ?? [])),
          () => [],
        ),
      ),
    );
    return lists.flat();
  }

  /** The daemon's long poll, for a far task (`logs --follow --host`). */
  async awaitOutput(host: string, taskId: string, offsets: { stdout: number; stderr: number }, timeoutMs: number, signal: AbortSignal): Promise<AwaitOutputResult> {
    const params = { task_id: taskId, stdout_offset: offsets.stdout, stderr_offset: offsets.stderr, timeout_ms: timeoutMs };
    return this.link(host).request<AwaitOutputResult>(AWAIT_OUTPUT_METHOD, params, AwaitOutputResultSchema, timeoutMs + 30_000, signal);
  }

  /** The far side's notices (a task that ended, output watches), with near-side ids. */
  onNotice(listener: (data: Record<string, unknown>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A far host's notice, relayed as data: control characters escaped, at most NOTICES_PER_SECOND (then how many were dropped). */
  private notice(host: string, given: Record<string, unknown>): void {
    let cap = this.noticeCaps.get(host);
    if (!cap) this.noticeCaps.set(host, (cap = new RateCap(NOTICES_PER_SECOND)));
    if (!cap.allow()) return;
    const dropped = cap.takeDropped();
    const data = escapeControls(given);
    const mapped = typeof data.task_id === "string" ? { ...data, task_id: nearId(host, data.task_id), host } : { ...data, host };
    for (const l of this.listeners) {
      if (dropped) l({ event: "notices_dropped", host, dropped, message: `${dropped} notices from host '${host}' were dropped (more than ${NOTICES_PER_SECOND} a second)` });
      l(mapped);
    }
  }

  get active(): boolean {
    return this.links.size > 0;
  }

  async close(): Promise<void> {
    for (const link of this.links.values()) link.close();
    await Promise.all([...this.sshConnections.values()].map((c) => c.close()));
  }
}

/** `~` and `~/…` in a working_directory mean the far side's home, as on an SSH host. */
function withFarHome(args: Record<string, unknown>, home: string | null): Record<string, unknown> {
  const wd = args.working_directory;
  if (home === null || typeof wd !== "string" || (wd !== "~" && !wd.startsWith("~/"))) return args;
  return { ...args, working_directory: home + wd.slice(1) };
}

/** A far side's advice names its own flags; on the near side the host's table is what to change. */
function explained(host: string, result: ToolResult): ToolResult {
  if (result.error_code !== "ACCESS_DENIED" || typeof result.error !== "string" || !result.error.includes("outside allowed paths")) return result;
  return { ...result, error: `${result.error.replace(/; add it with --allow DIR or the allowed_paths config key$/, "")}; on host '${host}' add it to allowed_paths in [hosts.${host}]` };
}
