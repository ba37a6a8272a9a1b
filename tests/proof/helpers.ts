/**
 * Shared pieces of the proof suite: a seeded PRNG (failures reproduce from the printed
 * seed), a raw JSON-RPC session over the binary's stdin/stdout (no SDK in between, so the
 * fuzz can write anything), process accounting by an inherited environment marker, and the
 * `PROOF <name>: ...` summary line that scripts/proof-table.ts collects into docs/proof.md.
 */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, alive } from "../helpers/mcp.ts";

export { BINARY };

/** PROOF_HEAVY=1 selects the full-size variants. */
export const HEAVY = process.env.PROOF_HEAVY === "1";

/** The seed: PROOF_SEED if given, else a fresh one (printed, so a failure can be replayed). */
export function proofSeed(): number {
  const env = process.env.PROOF_SEED;
  return env !== undefined ? Number(env) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
}

/** mulberry32: small, fast, good enough to generate test inputs reproducibly. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** One `PROOF` line, the row format docs/proof.md is built from. */
export function proofLine(name: string, counts: { tried: number; crashes: number; hangs: number; orphans: number; bytes_lost: number }, extra = ""): string {
  const line = `PROOF ${name}: tried=${counts.tried} crashes=${counts.crashes} hangs=${counts.hangs} orphans=${counts.orphans} bytes_lost=${counts.bytes_lost}${extra ? " " + extra : ""}`;
  console.log(line);
  return line;
}

export function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/**
 * Live processes whose environment holds `MARK=value`. Every child of a server started
 * with that variable inherits it (tools only add variables), so this finds every
 * descendant however it was detached, re-parented or renamed.
 */
export function processesWithEnv(mark: string, value: string): number[] {
  const needle = `${mark}=${value}`;
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (state === "Z" || state === "X") continue;
      const env = readFileSync(`/proc/${entry}/environ`, "latin1").split("\0");
      if (env.includes(needle)) out.push(Number(entry));
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return out;
}

/** Waits until no process carries the marker; returns what is left after `ms`. */
export async function waitNoEnvProcess(mark: string, value: string, ms = 5000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = processesWithEnv(mark, value);
    if (left.length === 0 || Date.now() > deadline) return left;
    await Bun.sleep(25);
  }
}

/** Peak resident set size (VmHWM) of a process, in kB; null once it is gone. */
export function vmHWM(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "latin1"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export interface RawResponse {
  id?: unknown;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

export interface RawOptions {
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  stateDir?: string;
}

/**
 * `agent-shell mcp` driven by raw lines on stdin. Responses are matched to requests by the
 * JSON form of their id; anything else the server prints is kept for inspection.
 */
export class RawSession {
  readonly proc: ReturnType<typeof Bun.spawn>;
  readonly cwd: string;
  readonly stateDir: string;
  private readonly ownCwd: boolean;
  private readonly ownState: boolean;
  private waiters = new Map<string, (r: RawResponse) => void>();
  /** Responses whose id matched no pending request (duplicates, answers to invalid ids). */
  readonly unmatched: RawResponse[] = [];
  readonly notifications: any[] = [];
  /** Lines on stdout that were not JSON (the protocol channel must carry only JSON). */
  readonly junk: string[] = [];
  stderr = "";
  readonly exited: Promise<number>;
  private nextId = 1_000_000_000;

  constructor(opts: RawOptions = {}) {
    this.ownCwd = opts.cwd === undefined;
    this.ownState = opts.stateDir === undefined;
    this.cwd = opts.cwd ?? tempDir("as-proof-cwd-");
    this.stateDir = opts.stateDir ?? tempDir("as-proof-state-");
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AGENT_SHELL_")) env[k] = v;
    Object.assign(env, opts.env);
    this.proc = Bun.spawn([BINARY, "mcp", "--state-dir", this.stateDir, ...(opts.args ?? [])], {
      cwd: this.cwd,
      env,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    this.exited = this.proc.exited;
    void this.readStdout();
    void this.readStderr();
  }

  get pid(): number {
    return this.proc.pid;
  }

  private async readStdout(): Promise<void> {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of this.proc.stdout as ReadableStream<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() !== "") this.onLine(line);
      }
    }
  }

  private async readStderr(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stderr as ReadableStream<Uint8Array>) {
      this.stderr += decoder.decode(chunk, { stream: true });
      if (this.stderr.length > 1_000_000) this.stderr = this.stderr.slice(-500_000);
    }
  }

  private onLine(line: string): void {
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      this.junk.push(line.slice(0, 200));
      return;
    }
    if (msg && typeof msg === "object" && "method" in msg && !("result" in msg) && !("error" in msg)) {
      this.notifications.push(msg);
      return;
    }
    const key = JSON.stringify(msg?.id);
    const waiter = this.waiters.get(key);
    if (waiter) {
      this.waiters.delete(key);
      waiter(msg);
    } else {
      this.unmatched.push(msg);
    }
  }

  /** Writes raw bytes or text to the server's stdin. */
  write(data: string | Uint8Array): void {
    const sink = this.proc.stdin as import("bun").FileSink;
    sink.write(data);
    sink.flush();
  }

  /** Sends a request line with `id` and resolves with its response, or null after `ms`. */
  request(id: unknown, method: string, params?: unknown, ms = 30_000): Promise<RawResponse | null> {
    const key = JSON.stringify(id);
    const line = JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
    return this.expect(key, line + "\n", ms);
  }

  /** Writes `line` and waits for the response whose id serialises to `key`. */
  expect(key: string, line: string | Uint8Array, ms: number): Promise<RawResponse | null> {
    if (this.waiters.has(key)) throw new Error(`id ${key} already pending`);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(key);
        resolve(null);
      }, ms);
      this.waiters.set(key, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      this.write(line);
    });
  }

  /** A fresh numeric id not used by the fuzz generator. */
  id(): number {
    return this.nextId++;
  }

  async initialize(): Promise<void> {
    const r = await this.request(this.id(), "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "agent-shell-proof", version: "0" },
    });
    if (!r?.result) throw new Error(`initialize failed: ${JSON.stringify(r)} ${this.stderr}`);
    this.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  }

  /** tools/call returning structuredContent (or the raw response when there is none). */
  async call(name: string, args: Record<string, unknown>, ms = 60_000): Promise<any> {
    const r = await this.request(this.id(), "tools/call", { name, arguments: args }, ms);
    if (r === null) throw new Error(`no answer to ${name} ${JSON.stringify(args).slice(0, 200)} within ${ms} ms`);
    return r.result?.structuredContent ?? r;
  }

  get alive(): boolean {
    return alive(this.proc.pid);
  }

  /** Closes stdin (a clean shutdown) and waits for exit; SIGKILL after `ms`. */
  async close(ms = 10_000): Promise<number> {
    try {
      (this.proc.stdin as import("bun").FileSink).end();
    } catch {}
    const code = await Promise.race([this.exited, Bun.sleep(ms).then(() => null)]);
    if (code === null) {
      this.proc.kill("SIGKILL");
      await this.exited;
    }
    this.cleanup();
    return code ?? -9;
  }

  /** Removes the temp dirs this session created. */
  cleanup(): void {
    if (this.ownCwd) rmSync(this.cwd, { recursive: true, force: true });
    if (this.ownState) rmSync(this.stateDir, { recursive: true, force: true });
  }
}
