import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "./mcp.ts";
import { processes } from "./procs.ts";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface CliSandbox {
  /** A fresh state dir (the daemon's home), removed by close(). */
  stateDir: string;
  /** A fresh working directory, removed by close(). */
  cwd: string;
  /** Environment for the CLI: AGENT_SHELL_STATE_DIR points at stateDir. */
  env: Record<string, string>;
  /** Runs the binary as a CLI (no TTY: stdin is /dev/null) and collects its output. */
  run(args: string[], opts?: { env?: Record<string, string>; cwd?: string }): Promise<CliResult>;
  /** Starts the binary as a CLI and returns the process, for streaming and signal tests. */
  spawn(args: string[], opts?: { env?: Record<string, string> }): Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** Live daemon processes serving this sandbox's state dir. */
  daemons(): number[];
  /** Stops the daemon (its tasks die with it), checks it is gone, removes the dirs. */
  close(): Promise<void>;
}

/** Runs the compiled binary as a command line, with no stdin (or the given text) and no AGENT_SHELL_* from the test's env. */
export async function runCli(args: string[], opts: { env?: Record<string, string>; cwd?: string; stdin?: string } = {}): Promise<CliResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AGENT_SHELL_")) env[k] = v;
  // Not the machine's own login shell (tests/helpers/preload.ts).
  if (process.env.AGENT_SHELL_SHELL_SNAPSHOT) env.AGENT_SHELL_SHELL_SNAPSHOT = process.env.AGENT_SHELL_SHELL_SNAPSHOT;
  Object.assign(env, opts.env);
  const t0 = performance.now();
  const proc = Bun.spawn([BINARY, ...args], {
    env,
    cwd: opts.cwd,
    stdin: opts.stdin !== undefined ? new Blob([opts.stdin]) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr, ms: performance.now() - t0 };
}

/** A private state dir and cwd for CLI tests, so each test file has its own daemon. */
export function cliSandbox(extraEnv: Record<string, string> = {}): CliSandbox {
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-cli-state-")));
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "as-cli-cwd-")));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  delete env.NO_COLOR;
  Object.assign(env, { AGENT_SHELL_STATE_DIR: stateDir }, extraEnv);
  const spawn = (args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}) =>
    Bun.spawn([BINARY, ...args], { cwd: opts.cwd ?? cwd, env: { ...env, ...opts.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const daemons = () =>
    processes()
      .filter((p) => p.cmdline.includes("daemon serve") && p.cmdline.includes(stateDir))
      .map((p) => p.pid);
  return {
    stateDir,
    cwd,
    env,
    spawn,
    daemons,
    async run(args, opts = {}) {
      const t0 = performance.now();
      const proc = spawn(args, opts);
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { code, stdout, stderr, ms: performance.now() - t0 };
    },
    async close() {
      await this.run(["daemon", "stop"]);
      const left = daemons();
      for (const pid of left) process.kill(pid, "SIGKILL");
      rmSync(stateDir, { recursive: true, force: true });
      rmSync(cwd, { recursive: true, force: true });
      if (left.length) throw new Error(`daemon still alive after 'daemon stop': ${left.join(" ")}`);
    },
  };
}

/** The daemon's pid as recorded in its lock file. */
export function daemonPid(stateDir: string): number {
  return Number(readFileSync(join(stateDir, "daemon.lock"), "utf8").trim());
}

/** Reads a stream line by line, calling `onLine(line, receivedAtMs)` as each arrives. */
export async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string, at: number) => void): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) !== -1) {
      onLine(pending.slice(0, nl), Date.now());
      pending = pending.slice(nl + 1);
    }
  }
  if (pending) onLine(pending, Date.now());
}
