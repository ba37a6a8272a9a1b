import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { ToolHost } from "../host/tool-host.ts";
import { serveDaemon } from "../mcp/daemon/daemon-server.ts";
import { tryLock } from "../background/state/file-lock.ts";
import { within } from "../first-of.ts";
import { processAlive } from "../runtime/process-groups/process-group.ts";
import { connectDaemon, ensureDaemon } from "./daemon-client.ts";
import { checkOwnership, daemonPaths, type DaemonPaths, lockHeld, resolveStateDir } from "./daemon-paths.ts";
import { hostOptions } from "./host-options.ts";
import { printJson, printOut, reportError, writeAll } from "./report.ts";
import { maybeHelp, parseVerbArgs, secondsOption } from "./verb-args.ts";
import { listAllTasks } from "./list-all-tasks.ts";

export const DAEMON_HELP = `Usage: agent-shell daemon start|stop|status

The per-user daemon runs background tasks for the CLI (start, ps, logs, wait, kill and
'call' with background tools). It is the same MCP server as 'agent-shell mcp', listening on
a unix socket (mode 0600) in the state dir; CLI verbs start it when needed, and it exits
by itself after an idle period with no client and no running task.

  start     start it now (no-op if it runs)
  stop      kill all its tasks (their whole process groups), remove the socket, exit
  status    print whether it runs, its pid, socket and task counts; exit 3 if it is not running

Options:
  --json             machine-readable output (status, start)
  --config FILE      (start) the daemon's configuration file
  --idle-timeout S   (start) exit after S idle seconds (default: config daemon_idle_seconds, env
                     AGENT_SHELL_DAEMON_IDLE_SECONDS, 900)
  --state-dir DIR    the state dir (default: $AGENT_SHELL_STATE_DIR, $XDG_STATE_HOME/agent-shell, ~/.local/state/agent-shell)

Examples:
  agent-shell daemon status
  agent-shell daemon stop
`;

const STOP_TIMEOUT_MS = 60_000;

/** `agent-shell daemon start|stop|status` (and the internal `serve`, the daemon process itself). */
export async function daemonCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("daemon", argv, {
    "state-dir": { type: "string" },
    "idle-timeout": { type: "string" },
    json: { type: "boolean" },
    config: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (maybeHelp(values, DAEMON_HELP)) return 0;
  const [action, ...extra] = positionals;
  if (extra.length) return reportError(`daemon: unexpected arguments: ${extra.join(" ")}`, 2);
  const paths = daemonPaths(await resolveStateDir(values["state-dir"] as string | undefined, values.config as string | undefined));
  secondsOption("daemon", "idle-timeout", values["idle-timeout"]); // validated here, used by serve
  if (action !== undefined && !["serve", "start", "stop", "status"].includes(action)) {
    return reportError(`daemon: unknown action '${action}' (start, stop or status)`, 2);
  }
  try {
    if (action === "serve") return await serve(paths, values);
    if (action === "start") return await start(paths, values.json === true, serveArgs(values));
    if (action === "stop") return await stop(paths, values.json === true);
    return await status(paths, values.json === true);
  } catch (e) {
    return reportError((e as Error).message);
  }
}

function daemonPid(paths: DaemonPaths): number | null {
  try {
    const pid = Number(readFileSync(paths.lock, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** `daemon start` options handed on to the daemon process. */
function serveArgs(values: Record<string, unknown>): string[] {
  const args: string[] = [];
  if (values.config !== undefined) args.push("--config", String(values.config));
  if (values["idle-timeout"] !== undefined) args.push("--idle-timeout", String(values["idle-timeout"]));
  return args;
}

async function start(paths: DaemonPaths, json: boolean, serve: string[]): Promise<number> {
  const already = await connectDaemon(paths);
  const client = already ?? (await ensureDaemon(paths, serve));
  await client.close();
  const info = { running: true, already_running: already !== null, pid: daemonPid(paths), socket: paths.socket, state_dir: paths.stateDir };
  if (json) printJson(info);
  else printOut(`daemon ${already ? "already running" : "started"} (pid ${info.pid}, socket ${paths.socket})\n`);
  return 0;
}

async function status(paths: DaemonPaths, json: boolean): Promise<number> {
  const client = await connectDaemon(paths);
  if (!client) {
    if (json) printJson({ running: false, socket: paths.socket, state_dir: paths.stateDir });
    else printOut(`daemon not running (state dir ${paths.stateDir})\n`);
    return 3;
  }
  try {
    const list = await listAllTasks(client, { status: "all" });
    const tasks = (list.tasks as Array<{ status: string }>) ?? [];
    const running = tasks.filter((t) => t.status === "running").length;
    const info = { running: true, pid: daemonPid(paths), socket: paths.socket, state_dir: paths.stateDir, tasks_running: running, tasks_total: tasks.length };
    if (json) printJson(info);
    else printOut(`daemon running (pid ${info.pid}, socket ${paths.socket}): ${running} running task(s), ${tasks.length} in all\n`);
    return 0;
  } finally {
    await client.close();
  }
}

/** SIGTERM to the daemon (it kills its tasks first), then wait for its socket to close. */
async function stop(paths: DaemonPaths, json: boolean): Promise<number> {
  const held = checkOwnership(paths, { create: false }) && lockHeld(paths.lock);
  const pid = held ? await verifiedDaemonPid(paths) : null;
  if (held && pid === null && lockHeld(paths.lock)) {
    return reportError(`${paths.lock} is held, but not by a process that looks like the daemon; not signalling anything`);
  }
  if (pid === null) {
    rmSync(paths.socket, { force: true }); // a stale socket of a daemon that died
    if (json) printJson({ stopped: false, running: false });
    else printOut("daemon not running\n");
    return 0;
  }
  // The kernel closes this connection when the daemon exits, however it exits: no polling.
  const { connect } = await import("node:net"); // here, not at the top: see main.ts
  const socket = connect(paths.socket);
  const connected = await new Promise<boolean>((resolve) => {
    socket.once("connect", () => resolve(true));
    socket.once("error", () => resolve(false));
  });
  socket.on("error", () => {});
  socket.on("data", () => {}); // keep reading, or the end of the stream is never noticed
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  if (connected) await within(closed, STOP_TIMEOUT_MS);
  socket.destroy();
  // Its last instant (or, with no connection, its whole shutdown): "stopped" means gone.
  while (processAlive(pid) && Date.now() < deadline) await Bun.sleep(10);
  if (processAlive(pid)) return reportError(`the daemon (pid ${pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s`);
  if (json) printJson({ stopped: true, pid });
  else printOut(`daemon stopped (pid ${pid})\n`);
  return 0;
}

/** The daemon process: wins the start lock or steps aside, then serves until idle or stopped. */
async function serve(paths: DaemonPaths, values: Record<string, unknown>): Promise<number> {
  checkOwnership(paths);
  const lock = tryLock(paths.lock);
  if (!lock) {
    writeAll(1, new TextEncoder().encode("busy\n"));
    return 0;
  }
  writeFileSync(paths.lock, `${process.pid}\n`);
  const base = hostOptions({ config: values.config as string | undefined, "state-dir": paths.stateDir });
  // The daemon serves its user's own terminal: it runs from / and each CLI request names its directory.
  const host = new ToolHost({ ...base, cwd: "/", persist: true });
  const idleSeconds = secondsOption("daemon", "idle-timeout", values["idle-timeout"]) ?? host.config.daemon_idle_seconds;
  process.stderr.write(`${new Date().toISOString()} daemon ${process.pid} serving on ${paths.socket}\n`);
  return serveDaemon(host, {
    socketPath: paths.socket,
    idleMs: idleSeconds * 1000,
    onListening: () => writeAll(1, new TextEncoder().encode("ready\n")),
    onExit: () => {
      process.stderr.write(`${new Date().toISOString()} daemon ${process.pid} exiting\n`);
      lock.release();
    },
  });
}

/**
 * The lock holder's pid, checked against its command line before we signal it: a daemon
 * that has just won the lock may not have written its pid yet (the file then holds a
 * previous, possibly reused, one).
 */
async function verifiedDaemonPid(paths: DaemonPaths): Promise<number | null> {
  for (let i = 0; i < 100; i++) {
    const pid = daemonPid(paths);
    if (pid !== null) {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        if (argv.includes("daemon") && argv.includes("serve")) return pid;
      } catch {
        if (process.platform !== "linux") return pid;
      }
    }
    if (!lockHeld(paths.lock)) return null;
    await Bun.sleep(10);
  }
  return null;
}
