/**
 * Peer benchmark: the same workloads against agent-shell (over MCP stdio), the raw
 * `bash -c` floor (Bun.spawn in this process, no protocol at all), and
 * bash-command-mcp and @wonderwhy-er/desktop-commander from npm (over MCP stdio; installed into a temp dir at
 * bench time with `npm install --ignore-scripts`, never into this project's dependencies).
 *
 *   bun run build.ts && bun run bench/peers.ts
 *   PEERS_DIR=/path/with/node_modules  reuse an existing install of both peers
 *   BENCH_QUICK=1                   fewer repetitions (smoke run)
 *
 * Prints one markdown table (date, machine, versions, the command). A peer that lacks a
 * capability gets "n/a" with the reason in the notes, never a made-up figure.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { $ } from "bun";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const BINARY = process.env.AGENT_SHELL_BINARY ?? join(ROOT, "dist/agent-shell");
const QUICK = process.env.BENCH_QUICK === "1";
const N_LATENCY = QUICK ? 30 : 200;
const N_MB = QUICK ? 3 : 10;
const N_BG_OVERHEAD = QUICK ? 5 : 20;
const N_COLD = QUICK ? 3 : 10;
const N_TASKS = 100;
const FLOOD_BYTES = 200_000_000;
const BG_SLEEP_S = 0.2;
/** How long a peer gets for the 200 MB flood before it is recorded as not answering. */
const FLOOD_LIMIT_MS = 120_000;

// ---------------------------------------------------------------------------------------
// helpers

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
const median = (xs: number[]) => pct(xs, 50);
const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(0));

function vmHWM(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "latin1"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Live processes whose command line contains `marker`. */
/** Live processes whose command line contains `marker` (or, `exact`, is it). */
function livePids(marker: string, exact = false): number[] {
  const out: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (state === "Z" || state === "X") continue;
      const cmdline = readFileSync(`/proc/${e}/cmdline`, "latin1").split("\0").join(" ").trim();
      if (exact ? cmdline === marker : cmdline.includes(marker)) out.push(Number(e));
    } catch {}
  }
  return out;
}

async function survivorsAfter(marker: string, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && livePids(marker).length) await Bun.sleep(50);
  const left = livePids(marker);
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  return left.length;
}

// ---------------------------------------------------------------------------------------
// the peers

interface FgResult {
  stdoutBytes: number;
  exit: number | null;
}

interface Peer {
  name: string;
  version: string;
  /** Starts the server; resolves when initialize has been answered. */
  start(): Promise<void>;
  pid(): number | null;
  fg(command: string): Promise<FgResult>;
  bgStart(command: string): Promise<string>;
  /** Resolves when the peer reports the task finished. */
  bgWaitDone(id: string): Promise<void>;
  /** How many tasks the peer lists as running. */
  listRunning(): Promise<number>;
  kill(id: string): Promise<void>;
  close(): Promise<void>;
  /** Capabilities a workload needs that this peer lacks (workload → reason). */
  lacks: Record<string, string>;
}

function envWithout(prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith(prefix)) env[k] = v;
  return Object.assign(env, extra);
}

class McpPeer {
  client!: Client;
  transport!: StdioClientTransport;
  constructor(
    private readonly command: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
    private readonly cwd: string,
  ) {}
  async connect(onNotice?: (data: any) => void): Promise<void> {
    this.transport = new StdioClientTransport({ command: this.command, args: this.args, env: this.env, cwd: this.cwd, stderr: "ignore" });
    this.client = new Client({ name: "agent-shell-bench", version: "0" });
    if (onNotice) this.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => onNotice(n.params.data));
    await this.client.connect(this.transport);
    // As stock clients do: listing the tools makes the SDK client check every structured
    // result against its tool's output schema (task_list's 100 entries included).
    await this.client.listTools();
  }
  async call(name: string, args: Record<string, unknown>, timeout = 600_000): Promise<any> {
    return this.client.callTool({ name, arguments: args }, undefined, { timeout, maxTotalTimeout: timeout });
  }
  pid(): number | null {
    return this.transport?.pid ?? null;
  }
  async close(): Promise<void> {
    const pid = this.pid();
    await this.client?.close().catch(() => {});
    // Wait (up to 5 s) for the server to be gone or a zombie, so the next workload starts clean.
    const deadline = Date.now() + 5000;
    while (pid && Date.now() < deadline) {
      try {
        const s = readFileSync(`/proc/${pid}/stat`, "latin1");
        if (s.slice(s.lastIndexOf(")") + 2, s.lastIndexOf(")") + 3) === "Z") break;
      } catch {
        break;
      }
      await Bun.sleep(20);
    }
  }
}

/** agent-shell as configured by default (every command in an OS sandbox), or with `--sandbox off` (like the peers). */
function agentShell(workdir: string, sandbox: "default" | "off" = "default"): Peer {
  const state = mkdtempSync(join(tmpdir(), "bench-as-state-"));
  const mcp = new McpPeer(BINARY, ["mcp", "--state-dir", state, ...(sandbox === "off" ? ["--sandbox", "off"] : [])], envWithout("AGENT_SHELL_"), workdir);
  const version = Bun.spawnSync([BINARY, "--version"]).stdout.toString().trim().replace(/^agent-shell\s+/, "");
  return {
    name: sandbox === "off" ? "agent-shell --sandbox off" : "agent-shell",
    version,
    lacks: {},
    start: () => mcp.connect(),
    pid: () => mcp.pid(),
    async fg(command) {
      const r = await mcp.call("bash", { command, timeout_seconds: 600 });
      const sc = r.structuredContent;
      if (sc.error) throw new Error(sc.error);
      // Foreground results hold at most 8,000 bytes of both streams together (shaped, SPEC §15); the full output is in stdout_path.
      const full = sc.stdout_path ? Bun.file(sc.stdout_path).size : Buffer.byteLength(sc.stdout);
      return { stdoutBytes: full, exit: sc.exit_code };
    },
    async bgStart(command) {
      const r = await mcp.call("bash", { command, run_in_background: true });
      return r.structuredContent.task_id;
    },
    async bgWaitDone(id) {
      const r = await mcp.call("task_output", { task_id: id, wait: true, timeout: 600 });
      if (r.structuredContent.status === "running") throw new Error("still running");
    },
    async listRunning() {
      const r = await mcp.call("task_list", { status: "running" });
      return r.structuredContent.tasks.length;
    },
    async kill(id) {
      await mcp.call("kill_shell", { task_id: id });
    },
    async close() {
      await mcp.close();
      rmSync(state, { recursive: true, force: true });
    },
  };
}

function desktopCommander(dcDir: string, home: string, workdir: string): Peer {
  const entry = join(dcDir, "node_modules/@wonderwhy-er/desktop-commander/dist/index.js");
  const version = JSON.parse(readFileSync(join(dcDir, "node_modules/@wonderwhy-er/desktop-commander/package.json"), "utf8")).version;
  const mcp = new McpPeer("node", [entry], envWithout("AGENT_SHELL_", { HOME: home }), workdir);
  const text = (r: any) => (r.content as any[]).map((c) => c.text ?? "").join("");
  const pidOf = (t: string) => {
    const m = /PID (\d+)/.exec(t);
    if (!m) throw new Error(`no PID in: ${t.slice(0, 200)}`);
    return m[1]!;
  };
  return {
    name: "desktop-commander",
    version,
    lacks: {
      exit: "start_process reports no exit code for a command that finishes within timeout_ms",
      list: "list_sessions lists its sessions; counted from its text",
    },
    start: () => mcp.connect(),
    pid: () => mcp.pid(),
    async fg(command) {
      const r = await mcp.call("start_process", { command, timeout_ms: 600_000 });
      const t = text(r);
      const out = t.slice(t.indexOf("Initial output:\n") + "Initial output:\n".length);
      return { stdoutBytes: Buffer.byteLength(out), exit: null };
    },
    async bgStart(command) {
      // A tiny timeout_ms returns at once and leaves the process running in a session.
      const r = await mcp.call("start_process", { command, timeout_ms: 1 });
      return pidOf(text(r));
    },
    async bgWaitDone(id) {
      // No wait-until-exit call: poll read_process_output (its timeout_ms waits for new output, not for exit).
      for (;;) {
        const t = text(await mcp.call("read_process_output", { pid: Number(id), timeout_ms: 50 }));
        if (t.includes("Process completed") || t.includes("No session found")) return;
      }
    },
    async listRunning() {
      const t = text(await mcp.call("list_sessions", {}));
      return (t.match(/PID: \d+/g) ?? []).length;
    },
    async kill(id) {
      await mcp.call("force_terminate", { pid: Number(id) });
    },
    close: () => mcp.close(),
  };
}

function bashCommandMcp(dir: string, workdir: string): Peer {
  const pkg = join(dir, "node_modules/bash-command-mcp");
  const version = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;
  const mcp = new McpPeer("node", [join(pkg, "dist/index.js")], envWithout("AGENT_SHELL_"), workdir);
  const text = (r: any) => (r.content as any[]).map((c) => c.text ?? "").join("");
  return {
    name: "bash-command-mcp",
    version,
    lacks: {},
    start: () => mcp.connect(),
    pid: () => mcp.pid(),
    async fg(command) {
      const t = text(await mcp.call("run", { command, timeoutSeconds: 600 }));
      const exit = /^EXIT_CODE: (-?\d+)/m.exec(t);
      const out = /\nSTDOUT:\n([\s\S]*?)(?:\nSTDERR:\n|$)/.exec(t)?.[1] ?? "";
      return { stdoutBytes: Buffer.byteLength(out), exit: exit ? Number(exit[1]) : null };
    },
    async bgStart(command) {
      const t = text(await mcp.call("run_background", { command }));
      const m = /PID: (\d+)/.exec(t);
      if (!m) throw new Error(`no PID in: ${t.slice(0, 200)}`);
      return m[1]!;
    },
    async bgWaitDone(id) {
      await mcp.call("wait_background", { pid: Number(id), timeoutSeconds: 600 });
    },
    async listRunning() {
      return (text(await mcp.call("list_background", {})).match(/STATUS: running/g) ?? []).length;
    },
    async kill(id) {
      await mcp.call("kill_background", { pid: Number(id) });
    },
    close: () => mcp.close(),
  };
}

const FLOOR_NAME = "bash -c (floor)";

/** The floor: Bun.spawn(["bash", "-c", …]) in this very process; no protocol, no registry. */
function floor(): Peer {
  const procs = new Map<string, ReturnType<typeof Bun.spawn>>();
  let n = 0;
  return {
    name: FLOOR_NAME,
    version: (Bun.spawnSync(["bash", "-c", "echo $BASH_VERSION"]).stdout.toString().trim() || "?") + ` via Bun.spawn ${Bun.version}`,
    lacks: { list: "no registry: the caller keeps the handles", cold: "no server: the cold-start figure is one `bash -c true`" },
    async start() {
      await Bun.spawn(["bash", "-c", "true"]).exited;
    },
    pid: () => process.pid,
    async fg(command) {
      const p = Bun.spawn(["bash", "-c", command], { stdout: "pipe", stderr: "pipe" });
      let bytes = 0;
      const drain = async (s: ReadableStream<Uint8Array>, count: boolean) => {
        for await (const c of s) if (count) bytes += c.byteLength;
      };
      await Promise.all([drain(p.stdout as ReadableStream<Uint8Array>, true), drain(p.stderr as ReadableStream<Uint8Array>, false)]);
      return { stdoutBytes: bytes, exit: await p.exited };
    },
    async bgStart(command) {
      const id = `f-${++n}`;
      procs.set(id, Bun.spawn(["bash", "-c", command], { stdout: "ignore", stderr: "ignore", detached: true }));
      return id;
    },
    async bgWaitDone(id) {
      await procs.get(id)!.exited;
    },
    async listRunning() {
      return [...procs.values()].filter((p) => p.exitCode === null && p.signalCode === null).length;
    },
    async kill(id) {
      const p = procs.get(id)!;
      try {
        process.kill(-p.pid, "SIGKILL");
      } catch {}
      await p.exited;
    },
    async close() {},
  };
}

// ---------------------------------------------------------------------------------------
// workloads

interface Row {
  peer: string;
  coldStart: string;
  fgP50: string;
  fgP99: string;
  mb: string;
  bgOverhead: string;
  tasks100: string;
  seqKill: string;
  flood: string;
  notes: string[];
}

async function timeIt<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await f();
  return [performance.now() - t0, v];
}

async function runPeer(make: () => Peer): Promise<Row> {
  const notes: string[] = [];
  const probe = make();
  const row: Row = { peer: `${probe.name} ${probe.version}`, coldStart: "", fgP50: "", fgP99: "", mb: "", bgOverhead: "", tasks100: "", seqKill: "", flood: "", notes };
  for (const [k, v] of Object.entries(probe.lacks)) notes.push(`${k}: ${v}`);
  console.error(`== ${probe.name}`);

  // cold start to initialize (fresh process each time)
  const colds: number[] = [];
  for (let i = 0; i < N_COLD; i++) {
    const p = i === 0 ? probe : make();
    const [t] = await timeIt(() => p.start());
    colds.push(t);
    if (i !== 0) await p.close();
  }
  row.coldStart = `${ms(median(colds))} ms`;
  const peer = probe;

  // foreground `true`
  const lat: number[] = [];
  for (let i = 0; i < 10; i++) await peer.fg("true"); // warm-up
  for (let i = 0; i < N_LATENCY; i++) lat.push((await timeIt(() => peer.fg("true")))[0]);
  row.fgP50 = `${ms(median(lat))} ms`;
  row.fgP99 = `${ms(pct(lat, 99))} ms`;
  console.error(`   fg true p50 ${row.fgP50} p99 ${row.fgP99}`);

  // 1 MB foreground output
  const mbTimes: number[] = [];
  let mbBytes = 0;
  for (let i = 0; i < N_MB; i++) {
    const [t, r] = await timeIt(() => peer.fg("head -c 1000000 /dev/zero | tr '\\0' a"));
    mbTimes.push(t);
    mbBytes = r.stdoutBytes;
  }
  row.mb = `${ms(median(mbTimes))} ms (${mbBytes === 1_000_000 ? "all 1,000,000 bytes" : `${mbBytes} bytes`})`;
  console.error(`   1 MB ${row.mb}`);

  // background start → completion noticed, minus the command's own 200 ms
  const over: number[] = [];
  for (let i = 0; i < N_BG_OVERHEAD; i++) {
    const [t] = await timeIt(async () => peer.bgWaitDone(await peer.bgStart(`sleep ${BG_SLEEP_S}`)));
    over.push(t - BG_SLEEP_S * 1000);
  }
  row.bgOverhead = `${ms(median(over))} ms (p99 ${ms(pct(over, 99))})`;
  console.error(`   bg overhead ${row.bgOverhead}`);

  // 100 background tasks: start, list, kill, survivors. Each task has a grandchild, as a
  // dev server or test runner would, so killing only the direct child leaves survivors.
  const marker = `${3000 + Math.floor(Math.random() * 1000)}.${Math.floor(Math.random() * 1e6)}`;
  const [tStart, ids] = await timeIt(() => Promise.all(Array.from({ length: N_TASKS }, () => peer.bgStart(`sleep ${marker} & sleep ${marker}; wait`))));
  // List and kill running tasks: a start may return before its process runs (a sandbox still being built).
  const runningBy = Date.now() + 10_000;
  while (livePids(`sleep ${marker}`, true).length < 2 * N_TASKS && Date.now() < runningBy) await Bun.sleep(10);
  await Bun.sleep(300);
  // The median of several list calls: one sample right after a burst is mostly noise.
  const lists: number[] = [];
  let listed = 0;
  for (let i = 0; i < 7; i++) {
    const [t, n] = await timeIt(() => peer.listRunning());
    lists.push(t);
    listed = n;
  }
  const tList = median(lists);
  const [tKill] = await timeIt(() => Promise.all(ids.map((id) => peer.kill(id))));
  const survivors = await survivorsAfter(marker, 3000);
  row.tasks100 = `start ${ms(tStart)} ms, list ${ms(tList)} ms (${listed} listed), kill ${ms(tKill)} ms, **${survivors} survivors**`;
  console.error(`   100 tasks ${row.tasks100}`);

  // 100 more, killed as an agent kills them: one call after another, each awaited.
  const seqMarker = `${3000 + Math.floor(Math.random() * 1000)}.${Math.floor(Math.random() * 1e6)}`;
  const seqIds = await Promise.all(Array.from({ length: N_TASKS }, () => peer.bgStart(`sleep ${seqMarker} & sleep ${seqMarker}; wait`)));
  const seqBy = Date.now() + 10_000;
  while (livePids(`sleep ${seqMarker}`, true).length < 2 * N_TASKS && Date.now() < seqBy) await Bun.sleep(10);
  await Bun.sleep(300);
  const [tSeqKill] = await timeIt(async () => {
    for (const id of seqIds) await peer.kill(id);
  });
  const seqSurvivors = await survivorsAfter(seqMarker, 3000);
  row.seqKill = `${ms(tSeqKill)} ms, **${seqSurvivors} survivors**`;
  console.error(`   kill 100 one after another ${row.seqKill}`);
  await peer.close();

  // 200 MB flood in a fresh server: time and the server's peak RSS
  const fresh = make();
  await fresh.start();
  const rssBefore = fresh.name === FLOOR_NAME ? null : vmHWM(fresh.pid()!);
  let flood: string;
  try {
    if (fresh.name === FLOOR_NAME) {
      // The floor's RSS is a separate bun process that drains the pipe, so it can be measured alone.
      const script = `const p=Bun.spawn(["bash","-c","yes flood | head -c ${FLOOD_BYTES}"],{stdout:"pipe"});let n=0;for await(const c of p.stdout)n+=c.byteLength;await p.exited;const m=/VmHWM:\\s+(\\d+)/.exec(require("fs").readFileSync("/proc/self/status","latin1"));console.log(n+" "+m[1]);`;
      const [t, out] = await timeIt(async () => (await $`bun -e ${script}`.quiet()).stdout.toString().trim());
      const [n, kb] = out.split(" ").map(Number);
      flood = `${ms(t)} ms, peak RSS ${Math.round(kb! / 1024)} MB (${n === FLOOD_BYTES ? "all bytes read" : `${n} bytes`})`;
    } else {
      const [t, r] = await timeIt(() => Promise.race([fresh.fg(`yes flood | head -c ${FLOOD_BYTES}`), Bun.sleep(FLOOD_LIMIT_MS).then(() => null)]));
      const kb = vmHWM(fresh.pid()!);
      flood =
        r === null
          ? `no answer within ${FLOOD_LIMIT_MS / 1000} s, peak RSS ${kb ? Math.round(kb / 1024) : "?"} MB`
          : `${ms(t)} ms, peak RSS ${kb ? Math.round(kb / 1024) : "?"} MB (start ${rssBefore ? Math.round(rssBefore / 1024) : "?"} MB; ${r.stdoutBytes === FLOOD_BYTES ? "all bytes kept" : `${r.stdoutBytes} bytes returned/kept`})`;
    }
  } catch (e) {
    const kb = fresh.pid() ? vmHWM(fresh.pid()!) : null;
    flood = `failed: ${(e as Error).message.slice(0, 120)} (peak RSS ${kb ? Math.round(kb / 1024) : "?"} MB)`;
  }
  row.flood = flood;
  console.error(`   flood ${flood}`);
  await fresh.close();
  return row;
}

// ---------------------------------------------------------------------------------------

/** Installs the peers from npm into one temp dir (PEERS_DIR reuses an existing install). */
async function installPeers(): Promise<{ dir: string; temp: boolean }> {
  if (process.env.PEERS_DIR) return { dir: process.env.PEERS_DIR, temp: false };
  const dir = mkdtempSync(join(tmpdir(), "bench-peers-"));
  console.error(`installing @wonderwhy-er/desktop-commander and bash-command-mcp into ${dir} (npm install --ignore-scripts) …`);
  writeFileSync(join(dir, "package.json"), '{"name":"bench-peer","private":true}');
  await $`npm install --ignore-scripts --no-audit --no-fund --silent @wonderwhy-er/desktop-commander bash-command-mcp`.cwd(dir).quiet();
  return { dir, temp: true };
}

const date = new Date().toISOString();
const machine = `${(await $`uname -srm`.quiet()).stdout.toString().trim()}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB`;
const commit = (await $`git -C ${ROOT} rev-parse --short HEAD`.quiet().nothrow()).stdout.toString().trim();
const nodeVersion = (await $`node --version`.quiet().nothrow()).stdout.toString().trim();

const workdir = mkdtempSync(join(tmpdir(), "bench-cwd-"));
const dcHome = mkdtempSync(join(tmpdir(), "bench-dc-home-"));
// desktop-commander reads ~/.claude-server-commander/config.json: telemetry off, nothing written to the real home.
mkdirSync(join(dcHome, ".claude-server-commander"));
writeFileSync(join(dcHome, ".claude-server-commander/config.json"), JSON.stringify({ telemetryEnabled: false }));
const dc = await installPeers();

const rows: Row[] = [];
try {
  rows.push(await runPeer(floor));
  rows.push(await runPeer(() => agentShell(workdir)));
  rows.push(await runPeer(() => agentShell(workdir, "off")));
  rows.push(await runPeer(() => bashCommandMcp(dc.dir, workdir)));
  rows.push(await runPeer(() => desktopCommander(dc.dir, dcHome, workdir)));
} finally {
  rmSync(workdir, { recursive: true, force: true });
  rmSync(dcHome, { recursive: true, force: true });
  if (dc.temp) rmSync(dc.dir, { recursive: true, force: true });
}

const out = [
  `### Peer benchmark — ${date}`,
  "",
  `- Machine: ${machine}${process.env.BENCH_NOTE ? ` (${process.env.BENCH_NOTE})` : ""}`,
  `- Versions: ${rows[1]?.peer} (commit ${commit}), Bun ${Bun.version}, Node ${nodeVersion}, ${rows.slice(3).map((r) => r.peer).join(", ")}`,
  `- Command: \`bun run build.ts && bun run bench/peers.ts\`${QUICK ? " (BENCH_QUICK=1)" : ""}`,
  `- Repetitions: fg latency ${N_LATENCY} (after 10 warm-up), 1 MB ${N_MB}, background overhead ${N_BG_OVERHEAD}, cold start ${N_COLD}; medians unless marked`,
  "",
  "| peer | cold start → initialize | fg `true` p50 | fg `true` p99 | 1 MB fg output | bg start → completion noticed (overhead) | 100 bg tasks: start / list / kill / survivors | kill 100 one after another, each awaited | 200 MB flood: time, peak RSS |",
  "|---|---|---|---|---|---|---|---|---|",
  ...rows.map((r) => `| ${r.peer} | ${r.coldStart} | ${r.fgP50} | ${r.fgP99} | ${r.mb} | ${r.bgOverhead} | ${r.tasks100} | ${r.seqKill} | ${r.flood} |`),
  "",
  "Notes:",
  ...rows.flatMap((r) => r.notes.map((n) => `- ${r.peer.split(" ")[0]}: ${n}`)),
  "- agent-shell returns at most 8,000 bytes of stdout and stderr together in a foreground result (shaped: errors, tail and head kept, every omission a marker naming its byte range) and spools the full output to `stdout_path`; the 1 MB and flood columns count the spooled bytes.",
  "- agent-shell runs every command in an OS sandbox by default (docs/sandbox.md); `--sandbox off` runs them as the other peers do, with the rest unchanged (task cgroups, spooling, watchdog).",
  "- 100 bg tasks: each task is `sleep X & sleep X; wait` (a grandchild, like a dev server's workers); survivors are processes still alive 3 s after the kills returned (then killed by the bench). The kill column kills all 100 at once; the next one starts 100 more and kills them one call after another, each awaited, as an agent does.",
  "- Every MCP peer is driven by the official SDK client after `tools/list`, so each structured result is checked against its tool's output schema (as stock clients do); the list figure is one such `task_list` (or the peer's list tool) with 100 running, median of 7.",
  "",
];
console.log(out.join("\n"));
