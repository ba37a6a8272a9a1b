import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, LoggingMessageNotificationSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { HostConfig } from "../../config/schema.ts";
import { CodedError, type ToolResult } from "../../errors.ts";
import { launchScript, nearPlatform, parseStatus } from "../../runtime/far/agent-scripts.ts";
import { installAgent, selfBinary, selfSha256 } from "../../runtime/far/install.ts";
import { openPipe } from "../../runtime/far/pipe.ts";
import { describeWayIn, type WayIn, wayIn } from "../../runtime/far/way-in.ts";
import type { SshConnection } from "../../runtime/ssh/connection/connection.ts";
import { VERSION } from "../../version.ts";
import { escapeControls, RateCap } from "./far-answers.ts";
import { PipeTransport } from "./pipe-transport.ts";

/** How long the far launcher may take to say whether agent-shell is there (an engine's exec, an SSH login). */
const STATUS_TIMEOUT_MS = 60_000;
/** A call without a deadline (hosts check's probe): the far side answers, or the pipe closes and the call fails. */
const NO_DEADLINE_MS = 2 ** 31 - 1;

export interface CallHooks {
  signal?: AbortSignal;
  progress?: (progress: number, message: string) => void;
  /** The call fails if the far side has not answered by then (ms; none: until the pipe closes). */
  deadlineMs?: number;
}

/** Progress messages a far call may relay each second; more are dropped (the next one says where it is). */
const PROGRESS_PER_SECOND = 10;

/** A call cut short by the pipe's end (a read may be asked again on a new pipe). */
export class PipeDroppedError extends CodedError {}

/** What the far side said when the pipe opened. */
export interface FarInfo {
  version: string;
  /** Whether this opening copied agent-shell there first. */
  copied: boolean;
}

/**
 * The pipe to one far-side host and the MCP client over it: opened on first use (copying
 * agent-shell there when it is missing), reused by every call, reopened by the next call
 * after it dies. The far side's daemon keeps the tasks meanwhile.
 */
export class FarLink {
  readonly way: WayIn;
  private client: Client | null = null;
  private transport: PipeTransport | null = null;
  private opening: Promise<Client> | null = null;
  private closed = false;
  /** Whether the pipe was ever open (its tasks may be listed). */
  used = false;
  info: FarInfo | null = null;
  /** The far side's $HOME (what `~` means there), learnt when the pipe opens. */
  home: string | null = null;

  constructor(
    readonly name: string,
    private readonly cfg: HostConfig,
    private readonly ssh: () => SshConnection,
    private readonly onNotice: (data: Record<string, unknown>) => void,
  ) {
    this.way = wayIn(cfg);
  }

  /** The local pid of the open pipe's process (null over SSH or when not open). */
  get pipePid(): number | null {
    return this.client ? (this.transport?.pipe.pid ?? null) : null;
  }

  /** The MCP client over the open pipe, opening (or reopening) it if needed. */
  connect(): Promise<Client> {
    if (this.closed) return Promise.reject(new CodedError("IO_ERROR", `The pipe to host '${this.name}' is closed (the server is shutting down)`, { host: this.name }));
    if (this.client) return Promise.resolve(this.client);
    this.opening ??= this.open().finally(() => (this.opening = null));
    return this.opening;
  }

  private async open(): Promise<Client> {
    let copied = false;
    for (;;) {
      const transport = await this.launch();
      const status = parseStatus(await this.statusOf(transport));
      if (status.kind === "ready") {
        this.home = status.home || null;
        return this.speak(transport, copied);
      }
      transport.pipe.close();
      // A binary whose hash differs (a far command may have replaced it) is copied over, never run.
      if ((status.kind === "missing" || status.kind === "differs") && !copied) {
        const near = nearPlatform();
        if (status.kind === "missing" && (status.os !== near.os || status.arch !== near.arch)) {
          throw this.error(
            `agent-shell is not installed there (${status.path}) and cannot be copied: the far side is ${status.os} ${status.arch}, this agent-shell is built for ${near.os} ${near.arch}. ` +
              `Install agent-shell ${VERSION} for ${status.os} ${status.arch} at ${status.path} (or set agent_path in [hosts.${this.name}])`,
          );
        }
        await installAgent(this.name, this.way, VERSION, this.cfg.agent_path, this.ssh);
        copied = true;
        continue;
      }
      if (status.kind === "other") {
        throw this.error(`${status.path} there is agent-shell ${status.version}, not ${VERSION}: install agent-shell ${VERSION} there (or point agent_path at it)`);
      }
      if (status.kind === "error") throw this.error(escapeControls(status.message));
      if (status.kind === "differs") throw this.error(`${status.path} still has SHA-256 ${status.sha256}, not this agent-shell's, after copying it there: it was not run`);
      throw this.error(status.kind === "unknown" ? `the far side answered '${escapeControls(status.line.slice(0, 200))}' instead of agent-shell's launcher` : "agent-shell is still missing after copying it");
    }
  }

  private async launch(): Promise<PipeTransport> {
    const cfg = this.cfg;
    const [cwd = "~", ...allow] = cfg.allowed_paths?.length ? cfg.allowed_paths : ["~"];
    const sha256 = selfBinary() ? await selfSha256() : undefined;
    const script = launchScript({ version: VERSION, agentPath: cfg.agent_path, cwd, allow, sandbox: cfg.sandbox, sha256, platform: nearPlatform() });
    const pipe = await openPipe(this.way, script, {}, this.ssh).catch((e: Error) => {
      throw e instanceof CodedError ? e.withContext({ host: this.name }) : this.error(e.message);
    });
    return new PipeTransport(pipe);
  }

  private async statusOf(transport: PipeTransport): Promise<string> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`no answer within ${STATUS_TIMEOUT_MS / 1000} s`)), STATUS_TIMEOUT_MS)));
    try {
      return await Promise.race([transport.status, late]);
    } catch (e) {
      transport.pipe.close();
      await transport.pipe.closed;
      throw this.error(this.unreachable((e as Error).message, transport.pipe.stderrTail()));
    } finally {
      clearTimeout(timer);
    }
  }

  /** What is wrong, in words: the engine's complaint classified, else the far side's own words. */
  private unreachable(why: string, stderr: string): string {
    const way = this.way;
    const said = stderr ? `: ${stderr.split("\n").slice(-3).join(" ")}` : "";
    if (way.kind === "container") {
      if (/no (such )?container|no container with name or id/i.test(stderr)) return `container '${way.container}' does not exist${said}`;
      if (/not running|state improper|is paused|stopped/i.test(stderr)) return `container '${way.container}' is not running${said}`;
      if (/command not found|executable file not found|no such file/i.test(stderr)) return `sh cannot be run in container '${way.container}'${said}`;
    }
    return `${why}${said}`;
  }

  private async speak(transport: PipeTransport, copied: boolean): Promise<Client> {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const client = new Client({ name: "agent-shell-near", version: VERSION }, { capabilities: {} });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const data = n.params.data;
      if (data && typeof data === "object") this.onNotice(data as Record<string, unknown>);
    });
    transport.onclose = () => {
      if (this.client === client) this.client = null;
    };
    try {
      await client.connect(transport);
    } catch (e) {
      transport.pipe.close();
      throw this.error(this.unreachable(`the MCP handshake failed: ${(e as Error).message}`, transport.pipe.stderrTail()));
    }
    this.transport = transport;
    this.client = client;
    this.used = true;
    this.info = { version: client.getServerVersion()?.version ?? "unknown", copied };
    if (this.closed) transport.pipe.close();
    return client;
  }

  /** One tool call on the far side; its result object as the far side returned it. */
  async call(tool: string, args: Record<string, unknown>, hooks: CallHooks = {}): Promise<ToolResult> {
    const client = await this.connect();
    const deadline = hooks.deadlineMs ?? NO_DEADLINE_MS;
    const cap = new RateCap(PROGRESS_PER_SECOND);
    try {
      const res = await client.callTool({ name: tool, arguments: args }, undefined, {
        // Progress does not extend it: a far side that only reports progress still ends by then.
        timeout: deadline,
        maxTotalTimeout: deadline,
        signal: hooks.signal,
        onprogress: hooks.progress ? (p) => cap.allow() && hooks.progress!(p.progress, escapeControls(p.message ?? "")) : undefined,
      });
      if (res.structuredContent) return res.structuredContent as ToolResult;
      const text = (res.content as Array<{ type: string; text?: string }>)[0]?.text ?? "{}";
      return JSON.parse(text) as ToolResult;
    } catch (e) {
      if (hooks.signal?.aborted) throw e;
      if (e instanceof McpError && e.code === ErrorCode.RequestTimeout && this.client === client) {
        throw this.error(`no answer to ${tool} within ${Math.round(deadline / 1000)} s (its time limit, the kill grace and a margin): the far agent did not answer, the call is given up (the far side may still finish it)`);
      }
      throw this.dropped(client, e as Error);
    }
  }

  /** A request of agent-shell's own (the daemon's await_output) on the far side. */
  async request<T>(method: string, params: Record<string, unknown>, schema: unknown, timeoutMs: number, signal?: AbortSignal): Promise<T> {
    const client = await this.connect();
    try {
      return (await client.request({ method, params }, schema as never, { timeout: timeoutMs, signal })) as T;
    } catch (e) {
      if (signal?.aborted) throw e;
      throw this.dropped(client, e as Error);
    }
  }

  /** Round trip of an MCP ping over the open pipe (ms). */
  async ping(): Promise<number> {
    const client = await this.connect();
    const t0 = performance.now();
    await client.ping();
    return performance.now() - t0;
  }

  private dropped(client: Client, e: Error): CodedError {
    if (e instanceof CodedError) return e;
    if (this.client !== client) {
      const message = `the pipe closed during the call (${e.message}); the next call reopens it, and background tasks there keep running`;
      return new PipeDroppedError("IO_ERROR", `Host '${this.name}' (${describeWayIn(this.way)}): ${message}`, { host: this.name });
    }
    return this.error(`the call failed: ${e.message}`);
  }

  private error(message: string): CodedError {
    return new CodedError("IO_ERROR", `Host '${this.name}' (${describeWayIn(this.way)}): ${message}`, { host: this.name });
  }

  close(): void {
    this.closed = true;
    this.transport?.pipe.close();
    this.client = null;
  }
}
