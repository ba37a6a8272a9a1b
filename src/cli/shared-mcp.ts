import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { readDaemonToken } from "../mcp/daemon/daemon-token.ts";
import { allowedRoots } from "../safety/paths.ts";
import { ensureDaemonSocket } from "./daemon-client.ts";
import { daemonPaths, resolveStateDir } from "./daemon-paths.ts";
import type { HostFlags } from "./host-flags.ts";
import { hostOptions } from "./host-options.ts";

/**
 * `agent-shell mcp --shared`: a stdio MCP server that is the per-user daemon (SPEC §12).
 * Bytes go both ways unchanged; the daemon runs the session, so sessions and clients that
 * start one server per call share one registry. This connection first declares its
 * `--cwd` and allowed paths, which the daemon enforces for it alone; confirmations stay
 * with the connection (a client that starts one process per call cannot confirm). The
 * daemon's confirmation questions (elicitation/create) and the client's answers pass
 * through like every other message: the person asked is this connection's.
 */
export async function sharedMcp(values: HostFlags): Promise<number> {
  const options = hostOptions(values);
  const cwd = realpathSync(resolve(options.cwd ?? process.cwd()));
  const allow = allowedRoots(cwd, options.config?.allowed_paths ?? []).slice(1);
  const paths = daemonPaths(await resolveStateDir(values["state-dir"], values.config));
  const socket = await ensureDaemonSocket(paths);
  const sandbox = options.config?.sandbox; // this client's --sandbox (flag, env or its config), else the daemon's
  // Who confirms is this connection's own configuration too (SPEC §19), like `mcp` without --shared.
  const confirm = { confirm_by: options.config?.confirm_by, confirm_timeout_seconds: options.config?.confirm_timeout_seconds };
  // So is its client's tool timeout (SPEC §23).
  const clock = options.config?.client_timeout_seconds !== undefined ? { client_timeout_seconds: options.config.client_timeout_seconds } : {};
  socket.write(`${JSON.stringify({ token: readDaemonToken(paths.socket), cwd, allow, ...(sandbox ? { sandbox } : {}), ...confirm, ...clock })}\n`);
  socket.on("data", (chunk: Buffer) => {
    if (!process.stdout.write(chunk)) {
      socket.pause();
      process.stdout.once("drain", () => socket.resume());
    }
  });
  process.stdin.on("data", (chunk: Buffer) => {
    if (!socket.write(chunk)) {
      process.stdin.pause();
      socket.once("drain", () => process.stdin.resume());
    }
  });
  // The client went away: end this connection (the daemon keeps the tasks; that is the point).
  process.stdin.on("end", () => socket.end());
  return new Promise<number>((done) => {
    socket.on("close", (hadError) => done(hadError ? 1 : 0));
    socket.on("error", (e) => {
      process.stderr.write(`agent-shell: the daemon connection failed: ${e.message}\n`);
    });
  });
}
