import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Client, ClientChannel, ConnectConfig, PseudoTtyOptions } from "ssh2";
import { expandHome } from "../../../expand-home.ts";
import { within } from "../../../first-of.ts";
import { ControlShell } from "./control-shell.ts";
import { connectError, SshError } from "../errors.ts";
import { fingerprint, verifyHostKey } from "./known-hosts.ts";
import { SessionSlots, type SlotPriority } from "./slots.ts";
import type { HostLink, OpenChannel } from "../host-link.ts";
import { SpawnerPool } from "../spawner/spawner-pool.ts";

export type { OpenChannel } from "../host-link.ts";

const KEEPALIVE_MS = 5_000;
/** How long close() lets queued control scripts finish. */
const CLOSE_IDLE_MS = 2_000;
const KEEPALIVE_MAX_MISSED = 3;
const CONNECT_TIMEOUT_MS = 15_000;
/** sshd's default MaxSessions; a lower server limit is learned on the first refusal. */
const DEFAULT_MAX_SESSIONS = 10;

/** Where and how to connect (a `[hosts.NAME]` table of the config satisfies it). */
export interface SshTarget {
  host: string;
  port: number;
  user?: string;
  identity_file?: string;
  known_hosts?: string;
  strict_host_key_checking: "yes" | "accept-new";
}

/**
 * The pooled connection to one configured host: one ssh2 Client, reused by every call
 * (channels multiplexed), with keepalive, reconnection on demand, a queue respecting the
 * server's session limit, and a control shell for small scripts.
 */
export class SshConnection implements HostLink {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private shell: ControlShell | null = null;
  private shellStarting: Promise<ControlShell> | null = null;
  private readonly slots = new SessionSlots(DEFAULT_MAX_SESSIONS);
  /** Persistent shells that start foreground commands without the rc files' cost. */
  readonly spawners = new SpawnerPool(this);
  private closed = false;
  /** Increments on every new connection; a handle compares it to notice reconnections. */
  generation = 0;
  readonly target: string;

  constructor(
    readonly name: string,
    private readonly cfg: SshTarget,
    /** TERM → this → KILL when the remote watchdog reaps tracked groups. */
    private readonly killGraceSeconds: number,
  ) {
    this.target = `${this.user}@${cfg.host}:${cfg.port}`;
    // Idle spawners hold slots: a channel that would wait for one gets it back from them.
    this.slots.onWait = () => this.spawners.releaseIdle();
  }

  get user(): string {
    return this.cfg.user ?? localUserName();
  }

  /** The live client, connecting (again) if needed. */
  async ensure(): Promise<Client> {
    if (this.closed) throw new SshError("IO_ERROR", `The connection pool for host '${this.name}' is closed`, { host: this.name });
    if (this.client) return this.client;
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    const { Client } = await import("ssh2");
    const client = new Client();
    const knownHosts = expandHome(this.cfg.known_hosts ?? join(homedir(), ".ssh", "known_hosts"));
    const info = { name: this.name, target: this.target, methods: [] as string[], hostKeyProblem: undefined as string | undefined };
    const config: ConnectConfig = {
      host: this.cfg.host,
      port: this.cfg.port,
      username: this.user,
      keepaliveInterval: KEEPALIVE_MS,
      keepaliveCountMax: KEEPALIVE_MAX_MISSED,
      readyTimeout: CONNECT_TIMEOUT_MS,
      hostVerifier: (key: Buffer) => {
        const verdict = verifyHostKey(knownHosts, this.cfg.host, this.cfg.port, key, this.cfg.strict_host_key_checking);
        if (verdict.ok) return true;
        const fp = fingerprint(key);
        info.hostKeyProblem =
          verdict.reason === "changed"
            ? `the host key has CHANGED (server offers ${fp}), it does not match ${knownHosts}; if the change is expected, remove the old line from that file`
            : `the host key ${fp} is unknown: it is not in ${knownHosts} (strict_host_key_checking = "yes"); add it there (e.g. ssh-keyscan -p ${this.cfg.port} ${this.cfg.host} >> ${knownHosts}, after checking the fingerprint) or set strict_host_key_checking = "accept-new"`;
        return false;
      },
    };
    // Private keys are read here and handed to ssh2 only: never logged, never in errors.
    if (this.cfg.identity_file) {
      const path = expandHome(this.cfg.identity_file);
      try {
        config.privateKey = readFileSync(path);
      } catch (e) {
        throw new SshError("IO_ERROR", `Cannot read identity_file of host '${this.name}': ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
          host: this.name,
        });
      }
      info.methods.push(`publickey (${path})`);
    } else if (process.env.SSH_AUTH_SOCK) {
      config.agent = process.env.SSH_AUTH_SOCK;
      info.methods.push(`publickey (ssh-agent at ${process.env.SSH_AUTH_SOCK})`);
    } else {
      for (const f of ["id_ed25519", "id_ecdsa", "id_rsa"]) {
        const path = join(homedir(), ".ssh", f);
        try {
          config.privateKey = readFileSync(path);
          info.methods.push(`publickey (${path})`);
          break;
        } catch {}
      }
    }
    return new Promise<Client>((resolve, reject) => {
      let ready = false;
      client.on("ready", () => {
        ready = true;
        this.client = client;
        this.generation++;
        resolve(client);
      });
      client.on("error", (err: Error & { level?: string; code?: string }) => {
        if (!ready) reject(connectError(err, info));
      });
      client.on("close", () => {
        if (!ready) reject(connectError(new Error("the server closed the connection during the handshake"), info));
        if (this.client === client) this.dropped();
      });
      try {
        client.connect(config);
      } catch (e) {
        reject(connectError(e as Error, info));
      }
    });
  }

  /** The connection went away: forget it; the next call reconnects. */
  private dropped(): void {
    this.client = null;
    this.shell?.close();
    this.shell = null;
  }

  /**
   * Opens an exec channel once a session slot is free (queueing, never failing on the
   * server's session limit). The slot is given back when the channel closes.
   */
  async exec(command: string, opts: { pty?: PseudoTtyOptions; priority?: SlotPriority } = {}): Promise<OpenChannel> {
    for (;;) {
      const release = await this.slots.acquire(opts.priority ?? "normal");
      let client: Client;
      try {
        client = await this.ensure();
      } catch (e) {
        release();
        throw e;
      }
      const generation = this.generation;
      try {
        const opened = await new Promise<OpenChannel>((resolve, reject) => {
          const cb = (err: Error | undefined, channel: ClientChannel) => {
            if (err) return reject(err);
            const exit = new Promise<{ code: number | null; signal: string | null } | null>((done) => {
              channel.once("exit", (code: number | null, signal?: string) => done({ code: code ?? null, signal: signal ?? null }));
              channel.once("close", () => done(null));
            });
            channel.once("close", release);
            resolve({ channel, generation, exit });
          };
          if (opts.pty) client.exec(command, { pty: opts.pty }, cb);
          else client.exec(command, cb);
        });
        return opened;
      } catch (e) {
        const message = (e as Error).message ?? "";
        if (/Channel open failure/i.test(message) && this.slots.used > 1 && this.client === client) {
          // The server allows fewer sessions than assumed: wait for one of ours to end.
          this.slots.shrink();
          release();
          continue;
        }
        release();
        if (this.client !== client) {
          throw new SshError("IO_ERROR", `Connection to host '${this.name}' (${this.target}) was lost: ${message}`, { host: this.name });
        }
        throw new SshError("IO_ERROR", `Cannot open a channel on host '${this.name}' (${this.target}): ${message}`, { host: this.name });
      }
    }
  }

  /** Runs a small POSIX sh script on the control shell; resolves with its exit code and output. */
  async run(script: string, timeoutMs?: number): Promise<{ code: number; out: string }> {
    const shell = await this.controlShell();
    try {
      return await shell.run(script, timeoutMs);
    } catch (e) {
      throw new SshError("IO_ERROR", `Remote control command on host '${this.name}' failed: ${(e as Error).message}`, { host: this.name });
    }
  }

  /** The remote watchdog: terminate group `pgid` if this connection goes away before `untrack`. */
  async track(pgid: number): Promise<void> {
    try {
      await (await this.controlShell()).track(pgid);
    } catch {
      /* no control shell: the command still runs, only without the drop guarantee */
    }
  }

  untrack(pgid: number): void {
    if (this.shell && !this.shell.closed) void this.shell.untrack(pgid).catch(() => {});
  }

  private async controlShell(): Promise<ControlShell> {
    if (this.shell && !this.shell.closed) return this.shell;
    this.shellStarting ??= this.exec("exec sh", { priority: "control" })
      .then(({ channel }) => (this.shell = new ControlShell(channel, this.killGraceSeconds)))
      .finally(() => (this.shellStarting = null));
    return this.shellStarting;
  }

  /** Lets queued control scripts (e.g. removing finished tasks' files) finish, briefly, then disconnects. */
  async close(): Promise<void> {
    if (this.shell && !this.shell.closed) await within(this.shell.idle(), CLOSE_IDLE_MS);
    this.closed = true;
    this.shell?.close();
    this.shell = null;
    this.client?.end();
    this.client = null;
  }
}

let userName: string | undefined;

/** The local user name, as ssh defaults to (os.userInfo() says "unknown" under Bun here). */
function localUserName(): string {
  userName ??= process.env.USER || process.env.LOGNAME || Bun.spawnSync(["id", "-un"]).stdout.toString().trim() || "root";
  return userName;
}
