/** Shared pieces of the benchmark: statistics, clocks, a hand-written MCP line client, /proc readers. */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { cpus } from "node:os";

// ---------- statistics ----------

export interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of an unsorted sample. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function stats(samples: number[]): Stats {
  const sum = samples.reduce((a, b) => a + b, 0);
  return {
    n: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    mean: sum / samples.length,
    min: Math.min(...samples),
    max: Math.max(...samples),
  };
}

export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

// ---------- clocks ----------

/**
 * CLOCK_REALTIME in nanoseconds: the clock `date +%s%N` reads, so a child's own timestamp
 * and ours are comparable to the microsecond (Date.now() only has milliseconds).
 */
let libc: { symbols: { clock_gettime: (clock: number, ts: number) => number } } | null = null;
const timespec = new BigInt64Array(2);
export function realtimeNs(): bigint {
  libc ??= dlopen("libc.so.6", {
    clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  }) as never;
  libc!.symbols.clock_gettime(0, ptr(timespec) as unknown as number);
  return timespec[0]! * 1_000_000_000n + timespec[1]!;
}

// ---------- /proc ----------

/** A `Vm*:` field of /proc/<pid>/status in MB (VmHWM is the peak resident set). */
export function vmField(pid: number, field: "VmHWM" | "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "latin1");
  const m = status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
  if (!m) throw new Error(`no ${field} for pid ${pid}`);
  return Number(m[1]) / 1024;
}

export function machine() {
  const cpuinfo = readFileSync("/proc/cpuinfo", "latin1");
  const model = cpuinfo.match(/^model name\s*:\s*(.*)$/m)?.[1]?.trim() ?? "unknown";
  const load = readFileSync("/proc/loadavg", "latin1").split(" ").slice(0, 3).join(" ");
  return { nproc: cpus().length, model, bun: Bun.version, date: new Date().toISOString(), loadavg_at_start: load };
}

// ---------- raw floor ----------

/** Drains a stream, returning the byte count (the reader loop gives the child back-pressure, not unbounded buffering). */
export async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) bytes += chunk.byteLength;
  return bytes;
}

/** Bun spawning `bash -c <command>` with both pipes read and the exit awaited; returns stdout bytes. */
export function rawBash(command: string): Promise<number> {
  return rawSpawn(["bash", "-c", command]);
}

/** rawBash that also appends every stdout chunk to `file` (the floor of a spooled flood). */
export async function rawBashSpooled(command: string, file: string): Promise<number> {
  const p = Bun.spawn(["bash", "-c", command], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const fd = openSync(file, "w");
  try {
    let bytes = 0;
    const spool = (async () => {
      for await (const chunk of p.stdout) {
        writeSync(fd, chunk);
        bytes += chunk.byteLength;
      }
    })();
    await Promise.all([spool, drain(p.stderr), p.exited]);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** Bun spawning `argv` with both pipes read and the exit awaited; returns stdout bytes. */
export async function rawSpawn(argv: string[], env?: Record<string, string>): Promise<number> {
  const p = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env });
  const [bytes] = await Promise.all([drain(p.stdout), drain(p.stderr), p.exited]);
  return bytes;
}

// ---------- hand-written MCP client ----------

export interface Notice {
  atNs: bigint;
  message: any;
}

/**
 * Newline-delimited JSON-RPC over the binary's stdio with nothing in between: shows how much
 * of a call's latency the SDK client itself adds.
 */
export class LineClient {
  readonly proc: Bun.Subprocess<"pipe", "pipe", "ignore">;
  readonly notices: Notice[] = [];
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: { msg: any; atNs: bigint }) => void; reject: (e: Error) => void }>();
  private readonly done: Promise<void>;
  /** Set by read(): when the first byte of stdout arrived (for cold start). */
  firstByteAt: number | null = null;

  constructor(binary: string, args: string[], cwd: string) {
    this.proc = Bun.spawn([binary, ...args], { cwd, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    this.done = this.read();
  }

  get pid(): number {
    return this.proc.pid;
  }

  private async read() {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of this.proc.stdout) {
      const atNs = realtimeNs();
      this.firstByteAt ??= performance.now();
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line.trim()) continue;
        const msg = JSON.parse(line);
        if (msg.id !== undefined && this.pending.has(msg.id)) {
          const p = this.pending.get(msg.id)!;
          this.pending.delete(msg.id);
          p.resolve({ msg, atNs });
        } else {
          this.notices.push({ atNs, message: msg });
        }
      }
    }
    for (const p of this.pending.values()) p.reject(new Error("server closed stdout"));
    this.pending.clear();
  }

  send(message: unknown) {
    this.proc.stdin.write(JSON.stringify(message) + "\n");
    this.proc.stdin.flush();
  }

  /** Sends a request; resolves with the response and the realtime at which its bytes arrived. */
  request(method: string, params: unknown): Promise<{ msg: any; atNs: bigint }> {
    const id = this.nextId++;
    const reply = new Promise<{ msg: any; atNs: bigint }>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.send({ jsonrpc: "2.0", id, method, params });
    return reply;
  }

  async initialize(): Promise<void> {
    await this.request("initialize", initializeParams());
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  /** tools/call returning the structured result (throws on a JSON-RPC error). */
  async call(name: string, args: Record<string, unknown>): Promise<{ result: any; atNs: bigint }> {
    const { msg, atNs } = await this.request("tools/call", { name, arguments: args });
    if (msg.error) throw new Error(`${name}: ${JSON.stringify(msg.error)}`);
    return { result: msg.result.structuredContent, atNs };
  }

  /** Closes stdin (the server's shutdown signal) and waits for the exit. */
  async close(): Promise<number> {
    try {
      this.proc.stdin.end();
    } catch {
      /* already closed */
    }
    const code = await this.proc.exited;
    await this.done.catch(() => {});
    return code;
  }
}

export function initializeParams() {
  return { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "agent-shell-bench", version: "0" } };
}
