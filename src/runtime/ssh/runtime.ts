import { hostname } from "node:os";
import type { ProcessHandle, Runtime, SpawnSpec } from "../types.ts";
import { ChannelHandle } from "./channel-handle.ts";
import { SshConnection, type SshTarget } from "./connection/connection.ts";
import { DurableHandle } from "./durable-handle.ts";
import { SshError } from "./errors.ts";
import { shq } from "./quote.ts";
import { directScript, launchScript, portProbeScript } from "./scripts.ts";

/** Names remote task folders after this process, so several servers can share a host. */
const OWNER_TAG = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 6)}`;
let remoteTaskCount = 0;

/**
 * Runs commands on one configured host over its pooled connection, behind the same
 * ProcessHandle seam as local processes. `spec.cwd` is a remote path (`~` = the remote
 * home) and `spec.env` holds only what the remote command should get on top of its own
 * environment. Background (`durable`) pipe tasks run detached and survive a dropped
 * connection; everything else streams on its channel.
 */
export class SshRuntime implements Runtime {
  constructor(readonly conn: SshConnection) {}

  resume(token: string, pgid: number, offsets: { stdout: number; stderr: number }): ProcessHandle {
    return new DurableHandle(this.conn, token, pgid, offsets);
  }

  portOpen(port: number): Promise<boolean> {
    return remotePortOpen(this.conn, port);
  }

  async spawn(given: SpawnSpec): Promise<ProcessHandle> {
    const conn = this.conn;
    // An argv runs as that program, each argument quoted: no word splitting or expansion.
    const spec = given.argv ? { ...given, command: `exec ${given.argv.map(shq).join(" ")}` } : given;
    if (spec.durable && !spec.tty && spec.stdin !== "pipe") {
      const name = `${OWNER_TAG}-${++remoteTaskCount}`;
      const stdin = spec.stdin === null ? null : spec.stdin.text;
      const script = launchScript(name, spec.command, spec.cwd, spec.env, stdin);
      const { code, out } = await conn.run(script, 30_000);
      const line = out.trim().split("\n").pop() ?? "";
      if (line === "C") throw notFound(conn, spec.cwd);
      const m = /^P(\d+)$/.exec(line);
      if (code !== 0 || !m) {
        throw new SshError("IO_ERROR", `Cannot start the background task on host '${conn.name}': ${out.trim() || `exit status ${code}`}`, {
          host: conn.name,
        });
      }
      return new DurableHandle(conn, name, Number(m[1]));
    }
    if (!spec.tty && spec.stdin !== "pipe") {
      // The common case: a persistent spawner, without the remote rc files' cost per command.
      const handle = await conn.spawners.spawn(spec.command, spec.cwd, spec.env, spec.stdin);
      if (handle) return handle;
    }
    const script = directScript(spec.command, spec.cwd, spec.env, spec.tty !== undefined);
    return ChannelHandle.open(conn, script, {
      tty: spec.tty ? { ...spec.tty, term: spec.env.TERM ?? "xterm-256color" } : undefined,
      stdin: spec.stdin,
      cwd: spec.cwd,
    });
  }
}

/** Checked from the remote host itself: readiness of a service started there. */
export async function remotePortOpen(conn: SshConnection, port: number): Promise<boolean> {
  const script = portProbeScript(port);
  try {
    return (await conn.run(script)).code === 0;
  } catch {
    return false;
  }
}

function notFound(conn: SshConnection, cwd: string): SshError {
  return new SshError("NOT_FOUND", `working_directory not found on host '${conn.name}': ${cwd}`, { host: conn.name, working_directory: cwd });
}

/** The configured hosts and their pooled connections (one per host, made on first use). */
export class SshHosts {
  private runtimes = new Map<string, SshRuntime>();

  constructor(
    private readonly hosts: Record<string, SshTarget>,
    private readonly killGraceSeconds: number,
  ) {}

  get names(): string[] {
    return Object.keys(this.hosts).sort();
  }

  config(name: string): SshTarget | undefined {
    return Object.hasOwn(this.hosts, name) ? this.hosts[name] : undefined;
  }

  /** The runtime of a configured host; undefined for an unknown name. */
  runtime(name: string): SshRuntime | undefined {
    const cfg = this.config(name);
    if (!cfg) return undefined;
    let rt = this.runtimes.get(name);
    if (!rt) {
      rt = new SshRuntime(new SshConnection(name, cfg, this.killGraceSeconds));
      this.runtimes.set(name, rt);
    }
    return rt;
  }

  /** Whether any host has been used (so there may be remote work to finish). */
  get active(): boolean {
    return this.runtimes.size > 0;
  }

  async close(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((rt) => rt.conn.close()));
    this.runtimes.clear();
  }
}
