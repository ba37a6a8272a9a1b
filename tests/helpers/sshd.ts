import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processes } from "./procs.ts";
import { localPortOpen } from "../../src/runtime/local/port-probe.ts";

/**
 * A real OpenSSH sshd on 127.0.0.1 for the SSH tests: a free port, a temporary host key and
 * authorized key, and a temporary HOME with a lean shell rc (sshd's `SetEnv HOME=` makes the
 * remote shells use it, so the machine's own ~/.bashrc and ~ stay untouched).
 * `stop()` kills the daemon and every session it served and removes the temp dir.
 */
export interface Sshd {
  port: number;
  /** Temp dir holding keys, config, known_hosts and the remote HOME. */
  dir: string;
  /** HOME of the remote shells. */
  home: string;
  user: string;
  /** Client private key accepted by the server. */
  identityFile: string;
  /** known_hosts holding the server's host key. */
  knownHosts: string;
  /** `ssh-ed25519 AAAA…` of the host key. */
  hostKey: string;
  pid: number;
  /** TOML `[hosts.NAME]` table pointing at this server (extra keys override). */
  hostToml(name: string, extra?: Record<string, string | number>): string;
  /** argv of the system `ssh` client reaching this server. */
  sshArgv(...command: string[]): string[];
  /** Terminates the per-connection sshd processes (drops every live connection). */
  dropConnections(): Promise<number>;
  stop(): Promise<void>;
}

const SSHD = existsSync("/usr/sbin/sshd") ? "/usr/sbin/sshd" : "sshd";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function keygen(path: string): Promise<void> {
  const p = Bun.spawn(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "agent-shell-test", "-f", path], {
    stdout: "ignore",
    stderr: "pipe",
  });
  if ((await p.exited) !== 0) throw new Error(`ssh-keygen failed: ${await new Response(p.stderr).text()}`);
}

export interface SshdOptions {
  maxSessions?: number;
  /** Content of the remote ~/.bashrc (default: a lean one). */
  bashrc?: string;
}

export async function startSshd(opts: SshdOptions = {}): Promise<Sshd> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "as-sshd-")));
  try {
    const home = join(dir, "home");
    mkdirSync(home, { mode: 0o700 });
    // A lean rc: per-command latency is dominated by the remote rc files (PLATFORM-NOTES).
    writeFileSync(join(home, ".bashrc"), opts.bashrc ?? "# lean test rc\n");
    writeFileSync(join(home, ".profile"), "# lean test profile\n");
    await keygen(join(dir, "host_ed25519"));
    await keygen(join(dir, "client_ed25519"));
    writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "client_ed25519.pub")));
    chmodSync(join(dir, "authorized_keys"), 0o600);
    const hostKey = readFileSync(join(dir, "host_ed25519.pub"), "utf8").trim().split(" ").slice(0, 2).join(" ");
    const port = await freePort();
    const knownHosts = join(dir, "known_hosts");
    writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostKey}\n`);
    const config = [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host_ed25519")}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      "PubkeyAuthentication yes",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "PermitRootLogin yes",
      "StrictModes no",
      "PrintMotd no",
      "PrintLastLog no",
      `MaxSessions ${opts.maxSessions ?? 10}`,
      "MaxStartups 100:30:200",
      `SetEnv HOME=${home}`,
      "LogLevel ERROR",
    ].join("\n");
    writeFileSync(join(dir, "sshd_config"), config + "\n");
    // sshd insists on its privilege separation directory, which the package's service
    // normally creates at boot. It is created here when missing and left in place (another
    // sshd may be using it).
    if (!existsSync("/run/sshd")) mkdirSync("/run/sshd", { mode: 0o755, recursive: true });
    const proc = Bun.spawn([SSHD, "-D", "-e", "-f", join(dir, "sshd_config")], { stdout: "ignore", stderr: "pipe" });
    let errText = "";
    void (async () => {
      for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) errText += new TextDecoder().decode(chunk);
    })();
    await waitListening(port, proc, () => errText);
    // os.userInfo().username says "unknown" under Bun here; ask id(1).
    const user = Bun.spawnSync(["id", "-un"]).stdout.toString().trim();
    const identityFile = join(dir, "client_ed25519");
    const sessionPids = () => descendants(proc.pid);
    return {
      port,
      dir,
      home,
      user,
      identityFile,
      knownHosts,
      hostKey,
      pid: proc.pid,
      hostToml(name, extra = {}) {
        const fields: Record<string, string | number> = {
          host: "127.0.0.1",
          port,
          user,
          identity_file: identityFile,
          known_hosts: knownHosts,
          ...extra,
        };
        const lines = Object.entries(fields).map(([k, v]) => `${k} = ${JSON.stringify(v)}`);
        return `[hosts.${name}]\n${lines.join("\n")}\n`;
      },
      sshArgv(...command) {
        return [
          "ssh",
          "-p",
          String(port),
          "-i",
          identityFile,
          "-o",
          `UserKnownHostsFile=${knownHosts}`,
          "-o",
          "StrictHostKeyChecking=yes",
          "-o",
          "BatchMode=yes",
          "-o",
          "LogLevel=ERROR",
          `${user}@127.0.0.1`,
          ...command,
        ];
      },
      async dropConnections() {
        const children = processes().filter((p) => p.ppid === proc.pid);
        for (const c of children) {
          try {
            process.kill(c.pid, "SIGTERM");
          } catch {}
        }
        return children.length;
      },
      async stop() {
        const sessions = sessionPids();
        proc.kill("SIGTERM");
        await proc.exited;
        for (const pid of sessions) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {}
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Every live descendant of `pid`. */
export function descendants(pid: number): number[] {
  const all = processes();
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    for (const c of all) {
      if (c.ppid === p) {
        out.push(c.pid);
        queue.push(c.pid);
      }
    }
  }
  return out;
}

async function waitListening(port: number, proc: Bun.Subprocess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`sshd exited with ${proc.exitCode}: ${stderr()}`);
    const ok = await localPortOpen(port);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`sshd did not listen on ${port}: ${stderr()}`);
    await Bun.sleep(20);
  }
}
