import { chmodSync, realpathSync, rmSync, statSync } from "node:fs";
import type { Socket } from "node:net";
import { isAbsolute } from "node:path";
import type { CallScope, ToolHost } from "../../host/tool-host.ts";
import { ConfigSchema } from "../../config/schema.ts";
import { allowedRoots } from "../../safety/paths.ts";
import { SANDBOX_MODES, type SandboxMode, strictness } from "../../sandbox/policy.ts";
import { AwaitOutputRequestSchema } from "../../mcp-extensions/await-output.ts";
import { RestartRequestSchema } from "../../mcp-extensions/restart-request.ts";
import { connectChecked, createMcpServer } from "../server.ts";
import { issueDaemonToken, tokenPath } from "./daemon-token.ts";
import { type DaemonHello, SocketTransport } from "../transports/socket-transport.ts";

export interface DaemonServerOptions {
  /** Unix socket path to listen on (created 0600; any stale file there is replaced). */
  socketPath: string;
  /** Exit after this long with no client connected and no running task. */
  idleMs: number;
  /** Called once listening (e.g. to tell the starting CLI). */
  onListening?: () => void;
  /** Runs just before the process exits (e.g. release the start lock). */
  onExit?: () => void;
}

/**
 * The per-user daemon: the same MCP server as `agent-shell mcp`, one session per
 * connection on a unix socket, over one ToolHost shared by every connection, so tasks
 * and ids outlive the CLI invocations that started them.
 */
export async function serveDaemon(host: ToolHost, opts: DaemonServerOptions): Promise<never> {
  const connections = new Set<Socket>();
  const token = issueDaemonToken(opts.socketPath);
  let idleTimer: ReturnType<typeof setTimeout> | null = null;
  let exiting = false;

  const armIdle = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    if (exiting || connections.size > 0 || host.hasRunningTasks()) return;
    idleTimer = setTimeout(() => {
      if (connections.size === 0 && !host.hasRunningTasks()) void exit();
    }, Math.min(opts.idleMs, 2 ** 31 - 1)); // setTimeout's ceiling (~24.8 days)
  };

  const { createServer } = await import("node:net"); // here, not at the top: see main.ts
  const listener = createServer((socket) => {
    connections.add(socket);
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    // Where this connection's calls may run: what its first line declares, else only the
    // daemon's configured allowed paths (never `/` for a client that declares nothing).
    const scope: CallScope = undeclaredScope(host);
    const server = createMcpServer(host, scope);
    server.setRequestHandler(AwaitOutputRequestSchema, ({ params: p }, extra) =>
      host.awaitOutput(p.task_id, { stdout: p.stdout_offset, stderr: p.stderr_offset }, p.timeout_ms, extra.signal),
    );
    server.setRequestHandler(RestartRequestSchema, (request, extra) => host.restart(request.params.task_id, extra.signal));
    socket.on("close", () => {
      connections.delete(socket);
      void server.close().catch(() => {});
      armIdle();
    });
    void connectChecked(server, new SocketTransport(socket, { expect: token, onHello: (hello) => Object.assign(scope, declaredScope(hello, scope, host.sandbox.mode)) })).catch(() => socket.destroy());
  });
  host.onTaskEnd(() => armIdle());

  const exit = async () => {
    if (exiting) return;
    exiting = true;
    if (idleTimer) clearTimeout(idleTimer);
    // Stop accepting first, so no new client reaches a daemon that is going away.
    listener.close();
    rmSync(opts.socketPath, { force: true });
    rmSync(tokenPath(opts.socketPath), { force: true });
    await host.close();
    // Release the start lock before the clients see their connection close.
    opts.onExit?.();
    for (const s of connections) s.destroy();
    process.exit(0);
  };
  process.on("SIGTERM", exit);
  process.on("SIGINT", exit);
  process.on("SIGHUP", exit);

  rmSync(opts.socketPath, { force: true });
  const oldMask = process.umask(0o177); // the socket is born 0600: no window where others can connect
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(opts.socketPath, () => resolve());
    });
  } finally {
    process.umask(oldMask);
  }
  chmodSync(opts.socketPath, 0o600);
  armIdle();
  opts.onListening?.();
  return new Promise<never>(() => {});
}

/** A connection that declares nothing: the daemon's configured allowed paths only. */
function undeclaredScope(host: ToolHost): CallScope {
  const roots = allowedRoots("/", host.config.allowed_paths).slice(1).filter((r) => r !== "/");
  return { cwd: roots[0] ?? "/", allowedRoots: roots };
}

/** A declared working directory (absolute, an existing directory), its `allow`ed roots, sandbox mode and who confirms. */
function declaredScope(hello: DaemonHello, fallback: CallScope, daemonMode: SandboxMode): CallScope {
  const declared = SANDBOX_MODES.find((m) => m === hello.sandbox);
  // A hello narrows the daemon's sandbox, never widens it (SPEC §20): a looser mode is only
  // requested, and every call that would use it is confirmed, like a per-call `sandbox`.
  const looser = declared !== undefined && strictness(declared) < strictness(daemonMode);
  const sandbox = looser ? undefined : declared;
  const confirm = declaredConfirm(hello);
  const clock = ClockSchema.safeParse({ client_timeout_seconds: hello.client_timeout_seconds });
  const clientTimeout = clock.success && clock.data.client_timeout_seconds !== undefined ? { clientTimeoutSeconds: clock.data.client_timeout_seconds } : {};
  const withMode = (scope: CallScope): CallScope => ({
    ...scope,
    ...(sandbox ? { sandbox } : {}),
    ...(looser ? { requestedSandbox: declared } : {}),
    ...(confirm ? { confirm } : {}),
    ...clientTimeout,
  });
  if (hello.cwd === undefined || !isAbsolute(hello.cwd)) return withMode(fallback);
  try {
    const cwd = realpathSync(hello.cwd);
    if (!statSync(cwd).isDirectory()) return withMode(fallback);
    return withMode({ cwd, allowedRoots: allowedRoots(cwd, hello.allow ?? []) });
  } catch {
    return withMode(fallback);
  }
}

/** The connection's own confirm_by and confirm_timeout_seconds (`mcp --shared` sends its config's), when both are valid. */
function declaredConfirm(hello: DaemonHello): CallScope["confirm"] | undefined {
  const parsed = ConfirmSchema.safeParse({ confirm_by: hello.confirm_by, confirm_timeout_seconds: hello.confirm_timeout_seconds });
  return hello.confirm_by !== undefined && parsed.success ? parsed.data : undefined;
}

const ConfirmSchema = ConfigSchema.pick({ confirm_by: true, confirm_timeout_seconds: true });
const ClockSchema = ConfigSchema.pick({ client_timeout_seconds: true });
