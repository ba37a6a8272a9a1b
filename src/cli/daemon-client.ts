import { OWNER_MARKER } from "../runtime/env.ts";
import { closeSync, openSync, readFileSync, statSync } from "node:fs";
import type { Socket } from "node:net";
import { basename } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { AWAIT_OUTPUT_METHOD, type AwaitOutputParams, type AwaitOutputResult, AwaitOutputResultSchema } from "../mcp-extensions/await-output.ts";
import { readDaemonToken, tokenPath } from "../mcp/daemon/daemon-token.ts";
import { RESTART_METHOD, RestartResultSchema } from "../mcp-extensions/restart-request.ts";
import { SocketTransport } from "../mcp/transports/socket-transport.ts";
import type { ToolResult } from "../errors.ts";
import { VERSION } from "../version.ts";
import { checkOwnership, type DaemonPaths, lockHeld } from "./daemon-paths.ts";

/** How long a CLI waits for an auto-started daemon to listen. */
const START_TIMEOUT_MS = 15_000;

/** An MCP session with the per-user daemon. */
export class DaemonClient {
  /**
   * Answers the daemon's confirmation questions (SPEC §19: it asks the person behind the
   * connection that made the call): set by a verb for its calls. Unset: no.
   */
  person: ((message: string, signal: AbortSignal) => Promise<boolean>) | null = null;

  constructor(private readonly client: Client) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra): Promise<ElicitResult> => {
      const yes = this.person !== null && (await this.person(request.params.message, extra.signal));
      return yes ? { action: "accept", content: { confirm: true } } : { action: "decline" };
    });
  }

  /** One tool call; the result object (errors in the SPEC's error shape). */
  async call(name: string, args: Record<string, unknown>, timeoutMs = 120_000, signal?: AbortSignal): Promise<ToolResult> {
    const res = await this.client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs, signal });
    if (res.structuredContent) return res.structuredContent as ToolResult;
    const text = (res.content as Array<{ type: string; text?: string }>)[0]?.text ?? "{}";
    return JSON.parse(text) as ToolResult;
  }

  /** Long poll: returns once the task has output past the offsets or has ended (see await-output.ts). */
  awaitOutput(params: AwaitOutputParams): Promise<AwaitOutputResult> {
    return this.client.request({ method: AWAIT_OUTPUT_METHOD, params }, AwaitOutputResultSchema as never, {
      timeout: params.timeout_ms + 30_000,
    }) as Promise<AwaitOutputResult>;
  }

  /** Restarts a task in place (see restart-request.ts); resolves once it is ready again. */
  restart(taskId: string, timeoutMs: number): Promise<ToolResult> {
    return this.client.request({ method: RESTART_METHOD, params: { task_id: taskId } }, RestartResultSchema as never, {
      timeout: timeoutMs,
    }) as Promise<ToolResult>;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** Connects to the running daemon; null when none is listening. */
export async function connectDaemon(paths: DaemonPaths): Promise<DaemonClient | null> {
  if (!checkOwnership(paths, { create: false })) return null;
  const socket = await tryConnect(paths.socket);
  return socket ? session(socket, paths.socket) : null;
}

/**
 * Connects to the daemon, starting it first if none runs. Race-free: every starter may
 * spawn one, but a daemon serves only while holding the flock on `daemon.lock`; a loser
 * exits at once and its CLI connects to the winner.
 */
export async function ensureDaemon(paths: DaemonPaths, serveArgs: string[] = []): Promise<DaemonClient> {
  return connectedTo(paths, serveArgs, (socket) => session(socket, paths.socket));
}

/** A connected socket to the daemon (started if none runs), for a face that speaks for itself (`mcp --shared`). */
export function ensureDaemonSocket(paths: DaemonPaths, serveArgs: string[] = []): Promise<Socket> {
  return connectedTo(paths, serveArgs, async (socket) => socket);
}

/** Connects (starting the daemon if none runs) and hands the socket to `use`; retried while a daemon comes or goes. */
async function connectedTo<T>(paths: DaemonPaths, serveArgs: string[], use: (socket: Socket) => Promise<T>): Promise<T> {
  checkOwnership(paths);
  const deadline = Date.now() + START_TIMEOUT_MS;
  let spawned = false;
  while (true) {
    const socket = await tryConnect(paths.socket);
    if (socket) {
      try {
        return await use(socket);
      } catch (e) {
        // A daemon that was just going idle may close on us: start over (a new one if need be).
        socket.destroy();
        if (Date.now() > deadline || (e as Error).message.startsWith("cannot read the daemon's token")) throw e;
        await Bun.sleep(20);
        continue;
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`the daemon did not start within ${START_TIMEOUT_MS / 1000} s; see ${paths.log}`);
    }
    if (!lockHeld(paths.lock)) {
      const outcome = await spawnDaemon(paths, serveArgs);
      if (outcome === "failed") throw new Error(`the daemon failed to start: ${logTail(paths.log)}`);
      spawned = true;
      if (outcome === "ready") continue;
    }
    // Another daemon holds the lock and is getting ready (or shutting down): try again shortly.
    await Bun.sleep(spawned ? 10 : 20);
  }
}

async function session(socket: Socket, socketPath: string): Promise<DaemonClient> {
  const token = readDaemonToken(socketPath);
  // A daemon is listening but its token cannot be read: inside a sandbox, no retry helps.
  if (token === "" && !tokenMayBeComing(socketPath)) {
    socket.destroy();
    throw new Error(`cannot read the daemon's token (${tokenPath(socketPath)}); from inside an agent-shell sandbox the daemon is out of reach by design`);
  }
  // It can ask its person: the daemon puts confirmations to this terminal (see DaemonClient.person).
  const client = new Client({ name: "agent-shell-cli", version: VERSION }, { capabilities: { elicitation: { form: {} } } });
  // A person's own terminal: its calls may run anywhere it names (each verb passes its directory).
  const hello = JSON.stringify({ token, cwd: process.cwd(), allow: ["/"] });
  await client.connect(new SocketTransport(socket, { send: hello }));
  return new DaemonClient(client);
}

async function tryConnect(path: string): Promise<Socket | null> {
  const { connect } = await import("node:net"); // here, not at the top: see main.ts
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", (e: NodeJS.ErrnoException) => {
      socket.destroy();
      if (e.code === "ENOENT" || e.code === "ECONNREFUSED" || e.code === "EAGAIN") resolve(null);
      else reject(new Error(`cannot connect to the daemon at ${path}: ${e.message}`));
    });
  });
}

/** argv that runs this same program (the compiled binary, or `bun src/main.ts` in development). */
export function selfCommand(): string[] {
  return /^bun(\.exe)?$/.test(basename(process.execPath)) ? [process.execPath, Bun.main] : [process.execPath];
}

function withoutOwnerMarker(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && k !== OWNER_MARKER) out[k] = v;
  return out;
}

/** Spawns `daemon serve` detached; resolves with its first line: ready, busy (lost the race) or failed. */
export async function spawnDaemon(paths: DaemonPaths, extra: string[] = []): Promise<"ready" | "busy" | "failed"> {
  const log = openSync(paths.log, "a", 0o600);
  let proc;
  try {
    proc = Bun.spawn([...selfCommand(), "daemon", "serve", "--state-dir", paths.stateDir, ...extra], {
      cwd: "/",
      stdin: "ignore",
      stdout: "pipe",
      stderr: log,
      detached: true,
      // A per-user service, not a child of whatever agent-shell ran this CLI: drop the owner
      // marker so that host's watchdog does not take the daemon down with it.
      env: withoutOwnerMarker(process.env),
    });
  } finally {
    closeSync(log);
  }
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const line = text.trim();
  if (line === "ready") {
    proc.unref(); // it lives on without us
    return "ready";
  }
  await proc.exited; // a loser or a failure exits at once: leave no process behind us
  return line === "busy" ? "busy" : "failed";
}

function logTail(path: string): string {
  try {
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    return lines.slice(-5).join("\n") || `(nothing in ${path})`;
  } catch {
    return `(no log at ${path})`;
  }
}

/**
 * Runs `fn` with a daemon session (starting the daemon if needed) and closes it after.
 * A daemon that cannot be reached or goes away is reported in one line, exit 1.
 */
export async function withDaemon(stateDirFlag: unknown, fn: (client: DaemonClient) => Promise<number>): Promise<number> {
  const { daemonPaths, resolveStateDir } = await import("./daemon-paths.ts");
  let client: DaemonClient;
  try {
    client = await ensureDaemon(daemonPaths(await resolveStateDir(stateDirFlag as string | undefined)));
  } catch (e) {
    if ((e as Error).name === "ConfigError") throw e; // exit 2, like every bad configuration
    process.stderr.write(`agent-shell: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    return await fn(client);
  } catch (e) {
    process.stderr.write(`agent-shell: the daemon connection failed: ${(e as Error).message}\n`);
    return 1;
  } finally {
    await client.close().catch(() => {});
  }
}

/** The token file exists but is unreadable (a sandbox), or is not written yet (a daemon starting up). */
function tokenMayBeComing(socketPath: string): boolean {
  try {
    statSync(tokenPath(socketPath));
    return false; // there, yet unreadable
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT";
  }
}
