/**
 * The foundation's performance targets, measured in one run against the compiled binary
 * (`AGENT_SHELL_BINARY` overrides dist/agent-shell). Prints a markdown table and writes
 * bench/results.json. Run after `bun run build.ts`: `bun run bench/run.ts`.
 *
 * Every figure that has a "raw" floor measures it in the same run, interleaved with the
 * agent-shell measurement, so background load on the machine hits both alike.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, startServer, type McpSession } from "../tests/helpers/mcp.ts";
import { processes, processesMatching } from "../tests/helpers/procs.ts";
import { sandboxedCommand } from "./bwrap-floor.ts";
import { closeHelperFloors, helperFloor } from "./helper-floor.ts";
import {
  initializeParams,
  LineClient,
  machine,
  rawBash,
  rawBashSpooled,
  rawSpawn,
  realtimeNs,
  round,
  stats,
  vmField,
  type Stats,
} from "./lib.ts";

const CALLS = 300; // per variant, after warm-up
const WARMUP = 30;
const ROUNDS = 6; // variants interleaved in rounds of CALLS / ROUNDS
const WAITS = 30;
const FLOOD_BYTES = 200_000_000;
const FLOOD_REPS = 3;
const COLD_STARTS = 15;

const startedAt = performance.now();
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-")));
const mcpArgs = ["mcp", "--state-dir", join(scratch, "state")];
const open = new Set<{ close(): Promise<unknown> }>();

let sessions = 0;
/** An SDK session whose cwd and state dir live in our scratch dir (removed at the end). */
async function sdkSession(args: string[] = []): Promise<McpSession> {
  const dir = join(scratch, `sdk-${++sessions}`);
  mkdirSync(join(dir, "state"), { recursive: true });
  const s = await startServer({ cwd: dir, stateDir: join(dir, "state"), args });
  open.add(s);
  return s;
}
async function lineSession(args: string[] = []): Promise<LineClient> {
  return initialized(new LineClient(BINARY, [...mcpArgs, ...args], scratch));
}
/** The contained MCP floor, measured (bench/mcp-floor-server.ts), in the line client's cwd. */
async function floorSession(args: string[] = []): Promise<LineClient> {
  return initialized(new LineClient(process.execPath, [join(import.meta.dir, "mcp-floor-server.ts"), join(scratch, "mcp-floor"), ...args], scratch));
}
async function initialized(c: LineClient): Promise<LineClient> {
  open.add(c);
  await c.initialize();
  return c;
}
async function closeSession(s: { close(): Promise<unknown> }) {
  open.delete(s);
  await s.close();
}

function log(msg: string) {
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${msg}\n`);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

function expectOk(result: any, what: string) {
  if (!result || result.exit_code !== 0 || result.success !== true) throw new Error(`${what}: unexpected result ${JSON.stringify(result)}`);
}

// ---------- 1. bash {command: "true"} versus the raw floor ----------

/** `true` four ways: the raw and bwrap-per-command floors, and over MCP sandboxed and `--sandbox off`. */
function trueVariants(sdk: McpSession, off: McpSession): Record<string, () => Promise<unknown>> {
  const contained = sandboxedCommand("true", sdk.cwd, sdk.stateDir);
  const helper = helperFloor("true", sdk.cwd, join(scratch, "helper-floor"), true);
  const helperOff = helperFloor("true", sdk.cwd, join(scratch, "helper-floor"), false);
  return {
    raw: () => rawBash("true"),
    raw_bwrap: () => rawSpawn(contained.argv, contained.env),
    raw_helper: helper,
    raw_helper_off: helperOff,
    sdk: async () => expectOk(await sdk.call("bash", { command: "true" }), "sdk bash true"),
    sdk_off: async () => expectOk(await off.call("bash", { command: "true" }), "sdk bash true, --sandbox off"),
  };
}

/** Line clients: agent-shell sandboxed and `--sandbox off`, and the measured contained MCP floor both ways. */
interface LineClients {
  line: LineClient;
  lineOff: LineClient;
  floor: LineClient;
  floorOff: LineClient;
}

async function benchCall(sdk: McpSession, off: McpSession, { line, lineOff, floor, floorOff }: LineClients) {
  const lineTrue = (client: LineClient, what: string) => async () => expectOk((await client.call("bash", { command: "true" })).result, what);
  const variants: Record<string, () => Promise<unknown>> = {
    ...trueVariants(sdk, off),
    line: lineTrue(line, "line bash true"),
    line_off: lineTrue(lineOff, "line bash true, --sandbox off"),
    line_floor: lineTrue(floor, "contained MCP floor"),
    line_floor_off: lineTrue(floorOff, "contained MCP floor, --sandbox off"),
    // The protocol and tool-dispatch cost alone, no child: a task_list on an empty registry.
    sdk_rpc: () => sdk.call("task_list", {}),
    line_rpc: () => line.call("task_list", {}),
  };
  const names = Object.keys(variants);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const name of names) for (let i = 0; i < WARMUP; i++) await variants[name]!();
  const perRound = CALLS / ROUNDS;
  for (let r = 0; r < ROUNDS; r++) {
    // Rotate the order so no variant always follows the same one.
    const order = names.map((_, i) => names[(i + r) % names.length]!);
    for (const name of order) for (let i = 0; i < perRound; i++) samples[name]!.push(await timed(variants[name]!));
  }
  return Object.fromEntries(names.map((n) => [n, stats(samples[n]!)])) as Record<string, Stats>;
}

/**
 * The same calls at an agent's pace: one every SPACED_GAP_MS (a model thinks between calls;
 * an idle machine wakes slower, and work done between calls is hidden). Interleaved.
 */
const SPACED_CALLS = 40;
const SPACED_GAP_MS = 100;

async function benchSpaced(sdk: McpSession, off: McpSession) {
  const variants = trueVariants(sdk, off);
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((n) => [n, []]));
  for (let i = 0; i < SPACED_CALLS; i++) {
    for (const [name, call] of Object.entries(variants)) {
      await Bun.sleep(SPACED_GAP_MS);
      samples[name]!.push(await timed(call));
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([n, v]) => [n, stats(v)])) as Record<string, Stats>;
}

// ---------- 2. task_output {wait: true} latency after the task's exit ----------

/**
 * The task's last act is `exec date +%s%N`: bash is replaced by date, which prints the
 * realtime clock and exits — that exit is the task's exit. The latency is our receive time
 * (same clock) minus that timestamp, so it also includes date's own exit (~tens of µs).
 * Two shapes: output long before the exit (the steady state: the spool file exists), and the
 * first output right at the exit (the server creates the task's spool file in that instant).
 */
const WAIT_COMMANDS = {
  early_output: "echo bench-wait-marker; sleep 0.2; exec date +%s%N",
  first_output_at_exit: "sleep 0.2; echo bench-wait-marker; exec date +%s%N",
};

function exitStamp(result: any): bigint {
  if (result?.status !== "completed" || result.exit_code !== 0) throw new Error(`wait: unexpected ${JSON.stringify(result)}`);
  const lines = String(result.stdout).trim().split("\n");
  return BigInt(lines[lines.length - 1]!);
}

async function benchWaitShape(sdk: McpSession, line: LineClient, command: string) {
  const sdkMs: number[] = [];
  const lineMs: number[] = [];
  const noticeMs: number[] = [];
  const rawMs: number[] = [];
  for (let i = 0; i < WAITS; i++) {
    {
      // Floor: how soon a parent that is itself blocked on the child sees its exit and EOF.
      const p = Bun.spawn(["bash", "-c", command], { stdin: "ignore", stdout: "pipe", stderr: "ignore" });
      const [text] = await Promise.all([new Response(p.stdout).text(), p.exited]);
      const at = realtimeNs();
      rawMs.push(Number(at - exitStamp({ status: "completed", exit_code: 0, stdout: text })) / 1e6);
    }
    {
      const started = await sdk.call("bash", { command, run_in_background: true });
      const out = await sdk.call("task_output", { task_id: started.task_id, wait: true, timeout: 10 });
      const at = realtimeNs();
      sdkMs.push(Number(at - exitStamp(out)) / 1e6);
    }
    {
      const started = (await line.call("bash", { command, run_in_background: true })).result;
      const { result, atNs } = await line.call("task_output", { task_id: started.task_id, wait: true, timeout: 10 });
      const exitNs = exitStamp(result);
      lineMs.push(Number(atNs - exitNs) / 1e6);
      // The task_finished notice is written before or just after the response; give it a moment.
      for (let t = 0; t < 100; t++) {
        const notice = line.notices.find((n) => n.message.params?.data?.task_id === started.task_id);
        if (notice) {
          noticeMs.push(Number(notice.atNs - exitNs) / 1e6);
          break;
        }
        await Bun.sleep(1);
      }
    }
  }
  return { command, raw: stats(rawMs), sdk: stats(sdkMs), line: stats(lineMs), notice: stats(noticeMs) };
}

async function benchWait(sdk: McpSession, line: LineClient) {
  const out: Record<string, Awaited<ReturnType<typeof benchWaitShape>>> = {};
  for (const [name, command] of Object.entries(WAIT_COMMANDS)) out[name] = await benchWaitShape(sdk, line, command);
  return out;
}

// ---------- 3. 200 MB background flood nobody reads ----------

const FLOODS = {
  zeros: `head -c ${FLOOD_BYTES} /dev/zero`,
  text: `yes 'agent-shell benchmark: a line of ordinary text output' | head -c ${FLOOD_BYTES}`,
};

async function floodOnce(command: string) {
  const s = await sdkSession();
  try {
    // A session's first command waits for its sandbox and spawner to be built (the first
    // reply and cold start rows measure that): the flood runs in a session that has run one.
    await s.call("bash", { command: "true" });
    const idleRss = vmField(s.pid, "VmRSS");
    const t0 = performance.now();
    const started = await s.call("bash", { command, run_in_background: true });
    const out = await s.call("task_output", { task_id: started.task_id, wait: true, timeout: 120, max_bytes: 1000 });
    const ms = performance.now() - t0;
    if (out.status !== "completed" || out.exit_code !== 0 || out.stdout_total_bytes !== FLOOD_BYTES) {
      throw new Error(`flood: unexpected ${JSON.stringify({ ...out, stdout: undefined })}`);
    }
    return { ms, peakRss: vmField(s.pid, "VmHWM"), idleRss, taskMs: out.duration_ms as number, resultBytes: out.stdout.length as number };
  } finally {
    await closeSession(s);
  }
}

async function benchFlood() {
  const out: Record<string, any> = {};
  for (const [name, command] of Object.entries(FLOODS)) {
    const raw: number[] = [];
    const spooled: number[] = [];
    const runs: Awaited<ReturnType<typeof floodOnce>>[] = [];
    // The spool floor: the raw floor that also appends every chunk it reads to a file (SPEC §5
    // keeps every byte of a background task on disk; agent-shell leaves zeros as holes).
    const spoolFile = join(scratch, "flood-floor.log");
    for (let r = 0; r < FLOOD_REPS; r++) {
      const t0 = performance.now();
      const bytes = await rawBash(command);
      raw.push(performance.now() - t0);
      if (bytes !== FLOOD_BYTES) throw new Error(`raw flood wrote ${bytes} bytes`);
      spooled.push(await timed(() => rawBashSpooled(command, spoolFile)));
      rmSync(spoolFile, { force: true });
      runs.push(await floodOnce(command));
    }
    const mb = FLOOD_BYTES / 1e6;
    const rawMs = stats(raw).p50;
    const mcpMs = stats(runs.map((r) => r.ms)).p50;
    out[name] = {
      command,
      raw_ms: round(rawMs, 1),
      mcp_ms: round(mcpMs, 1),
      raw_mb_s: round(mb / (rawMs / 1000), 0),
      mcp_mb_s: round(mb / (mcpMs / 1000), 0),
      ratio: round(rawMs / mcpMs, 3),
      spool_floor_ms: round(stats(spooled).p50, 1),
      task_duration_ms: stats(runs.map((r) => r.taskMs)).p50,
      peak_rss_mb: round(Math.max(...runs.map((r) => r.peakRss)), 1),
      idle_rss_mb: round(stats(runs.map((r) => r.idleRss)).p50, 1),
      all_mcp_ms: runs.map((r) => round(r.ms, 1)),
      all_raw_ms: raw.map((x) => round(x, 1)),
    };
  }
  return out;
}

// ---------- 4. background work: completion overhead, 100 tasks started, listed, killed ----------

const BG_SLEEP_MS = 200;
const BG_OVERHEAD_RUNS = 20;
const N_TASKS = 100;

/** Start → completion noticed, minus the command's own 200 ms: raw Bun.spawn versus bash + task_output wait. */
async function benchBackgroundOverhead(s: McpSession) {
  const raw: number[] = [];
  const contained: number[] = [];
  const ours: number[] = [];
  const inSandbox = sandboxedCommand(`sleep ${BG_SLEEP_MS / 1000}`, s.cwd, s.stateDir);
  for (let i = 0; i < BG_OVERHEAD_RUNS; i++) {
    raw.push((await timed(() => Bun.spawn(["bash", "-c", `sleep ${BG_SLEEP_MS / 1000}`], { stdout: "ignore", stderr: "ignore", detached: true }).exited)) - BG_SLEEP_MS);
    contained.push((await timed(() => Bun.spawn(inSandbox.argv, { env: inSandbox.env, stdout: "ignore", stderr: "ignore", detached: true }).exited)) - BG_SLEEP_MS);
    ours.push(
      (await timed(async () => {
        const t = await s.call("bash", { command: `sleep ${BG_SLEEP_MS / 1000}`, run_in_background: true });
        await s.call("task_output", { task_id: t.task_id, wait: true, timeout: 10 });
      })) - BG_SLEEP_MS,
    );
  }
  return { raw: stats(raw), contained: stats(contained), mcp: stats(ours) };
}

/**
 * 100 tasks that each leave a grandchild (`sleep X & sleep X; wait`), started at once; then,
 * once all are running (both sleeps of every task exist), task_list (median of 7) and 100
 * concurrent kill_shell calls, each returning only when its whole group is gone. The raw
 * floor starts, waits for and SIGKILLs the same groups from Bun directly, the bwrap-per-command floor
 * the same groups in the default sandbox's bwrap. A burst's figures swing with what the
 * machine is still doing (100 namespaces being torn down): HUNDRED_ROUNDS rounds, the three
 * in a rotating order, medians. Driven by the line client: on two cores, the SDK client's own
 * work for 100 answers at once (it checks each against the tool's output schema) competes
 * with the server and was measured to double the burst's time.
 *
 * Of each burst of starts, the first reply's time from its request and the last reply's
 * (all requests are written at once; a server that handles every request before answering
 * any sends the first reply at the end). And a second set of 100 is killed the way an agent
 * does it: one kill_shell after another, each awaited (the floors: one SIGKILL after
 * another, each exit awaited).
 */
const HUNDRED_ROUNDS = 3;

/** Whether `pid` is a live process (not gone, not a zombie). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = stat[stat.lastIndexOf(")") + 2];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function benchHundred(line: LineClient) {
  const marker = () => `${3000 + Math.floor(Math.random() * 1000)}.${Math.floor(Math.random() * 1e6)}`;
  const command = (m: string) => `sleep ${m} & sleep ${m}; wait`;
  /** Starts and kills 100 groups spawned directly: the floors (kill: all at once, or one after another). */
  const direct = async (argvFor: (m: string) => { argv: string[]; env?: Record<string, string> }, sequential = false, termWholeGroup = false) => {
    const m = marker();
    const { argv, env } = argvFor(m);
    let procs: Bun.Subprocess[] = [];
    const start = await timed(async () => {
      procs = Array.from({ length: N_TASKS }, () => Bun.spawn(argv, { env, stdout: "pipe", stderr: "pipe", detached: true }));
    });
    await allRunning(m);
    // As kill_shell (SPEC §3.3): SIGTERM, then until no process of the group is alive (its
    // grandchildren too; zombies count as gone, as a cgroup counts them), each polled through
    // /proc each turn: the members are found before the kills start, off the clock.
    const members = termWholeGroup ? new Map(procs.map((p) => [p.pid, processes().filter((q) => q.pgrp === p.pid).map((q) => q.pid)])) : null;
    const killOne = async (p: Bun.Subprocess) => {
      process.kill(-p.pid, termWholeGroup ? "SIGTERM" : "SIGKILL");
      await p.exited;
      for (const pid of members?.get(p.pid) ?? []) while (alive(pid)) await new Promise((resolve) => setImmediate(resolve));
    };
    const kill = await timed(async () => {
      if (sequential) for (const p of procs) await killOne(p);
      else await Promise.all(procs.map(killOne));
    });
    return { start, kill, survivors: processesMatching(m).length };
  };
  /** 100 starts written at once: the burst's time, and its first and last reply from the first request. */
  const startBurst = async (m: string) => {
    const sentNs: bigint[] = [];
    let replies: { result: any; atNs: bigint }[] = [];
    const start = await timed(async () => {
      replies = await Promise.all(
        Array.from({ length: N_TASKS }, () => {
          sentNs.push(realtimeNs());
          return line.call("bash", { command: command(m), run_in_background: true });
        }),
      );
    });
    const lastNs = replies.reduce((a, r) => (r.atNs > a ? r.atNs : a), 0n);
    return { start, ids: replies.map((r) => r.result.task_id as string), firstReply: Number(replies[0]!.atNs - sentNs[0]!) / 1e6, lastReply: Number(lastNs - sentNs[0]!) / 1e6 };
  };
  const ours = async () => {
    const m = marker();
    const { start, ids, firstReply, lastReply } = await startBurst(m);
    await allRunning(m);
    const lists: number[] = [];
    for (let i = 0; i < 7; i++) lists.push(await timed(() => line.call("task_list", { status: "running" })));
    const kill = await timed(() => Promise.all(ids.map((id) => line.call("kill_shell", { task_id: id }))));
    return { start, kill, lists, firstReply, lastReply, survivors: processesMatching(m).length };
  };
  const oursSequential = async () => {
    const m = marker();
    const { start, ids, firstReply, lastReply } = await startBurst(m);
    await allRunning(m);
    const kill = await timed(async () => {
      for (const id of ids) await line.call("kill_shell", { task_id: id });
    });
    return { start, kill, firstReply, lastReply, survivors: processesMatching(m).length };
  };
  const inBwrap = (m: string) => sandboxedCommand(command(m), scratch, join(scratch, "state"));
  const runs = {
    raw: () => direct((m) => ({ argv: ["bash", "-c", command(m)] })),
    bwrap: () => direct(inBwrap),
    ours,
    raw_seq: () => direct((m) => ({ argv: ["bash", "-c", command(m)] }), true),
    raw_seq_group: () => direct((m) => ({ argv: ["bash", "-c", command(m)] }), true, true),
    bwrap_seq: () => direct(inBwrap, true),
    ours_seq: oursSequential,
  };
  type Run = { start: number; kill: number; survivors: number; lists?: number[]; firstReply?: number; lastReply?: number };
  const names = Object.keys(runs) as (keyof typeof runs)[];
  const got = Object.fromEntries(names.map((n) => [n, [] as Run[]])) as Record<keyof typeof runs, Run[]>;
  for (let r = 0; r < HUNDRED_ROUNDS; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length]!;
      got[name]!.push(await runs[name]());
    }
  }
  const median = (name: keyof typeof runs, field: "start" | "kill") => round(stats(got[name]!.map((x) => x[field])).p50, 1);
  const bursts = [...got.ours!, ...got.ours_seq!];
  return {
    raw_start_ms: median("raw", "start"),
    bwrap_start_ms: median("bwrap", "start"),
    start_ms: median("ours", "start"),
    all_start_ms: got.ours!.map((x) => round(x.start, 1)),
    first_reply: stats(bursts.map((x) => x.firstReply!)),
    last_reply: stats(bursts.map((x) => x.lastReply!)),
    all_first_reply_ms: bursts.map((x) => round(x.firstReply!, 1)),
    list: stats(got.ours!.flatMap((x) => x.lists!)),
    raw_kill_ms: median("raw", "kill"),
    bwrap_kill_ms: median("bwrap", "kill"),
    kill_ms: median("ours", "kill"),
    all_kill_ms: got.ours!.map((x) => round(x.kill, 1)),
    raw_seq_kill_ms: median("raw_seq", "kill"),
    raw_seq_group_kill_ms: median("raw_seq_group", "kill"),
    bwrap_seq_kill_ms: median("bwrap_seq", "kill"),
    seq_kill_ms: median("ours_seq", "kill"),
    all_seq_kill_ms: got.ours_seq!.map((x) => round(x.kill, 1)),
    // agent-shell's own (a floor's grandchildren may still be dying when its leader's exit is seen).
    survivors: [...got.ours!, ...got.ours_seq!].reduce((n, x) => n + x.survivors, 0),
    floor_survivors: [...got.raw!, ...got.bwrap!, ...got.raw_seq!, ...got.raw_seq_group!, ...got.bwrap_seq!].reduce((n, x) => n + x.survivors, 0),
  };
}

/**
 * task_list of 100 running tasks through both clients: the SDK client (it has listed the
 * tools, so it checks each result against task_list's output schema, as stock clients do)
 * and the line client, interleaved, each against its own server holding 100 `sleep`s.
 */
const LIST_CALLS = 40;

async function benchList(sdk: McpSession, line: LineClient) {
  const m = marker100();
  const sdkIds = await Promise.all(Array.from({ length: N_TASKS }, () => sdk.call("bash", { command: `sleep ${m}`, run_in_background: true }).then((r) => r.task_id as string)));
  const lineIds = await Promise.all(Array.from({ length: N_TASKS }, () => line.call("bash", { command: `sleep ${m}`, run_in_background: true }).then((r) => r.result.task_id as string)));
  const deadline = performance.now() + 10_000;
  while (processes().filter((p) => p.cmdline === `sleep ${m}`).length < 2 * N_TASKS && performance.now() < deadline) await Bun.sleep(5);
  const sdkMs: number[] = [];
  const lineMs: number[] = [];
  let listed = 0;
  for (let i = 0; i < LIST_CALLS; i++) {
    sdkMs.push(await timed(async () => (listed = (await sdk.call("task_list", { status: "running" })).tasks.length)));
    lineMs.push(await timed(() => line.call("task_list", { status: "running" })));
  }
  await Promise.all([...sdkIds.map((id) => sdk.call("kill_shell", { task_id: id })), ...lineIds.map((id) => line.call("kill_shell", { task_id: id }))]);
  return { sdk: stats(sdkMs), line: stats(lineMs), listed };
}

const marker100 = () => `${3000 + Math.floor(Math.random() * 1000)}.${Math.floor(Math.random() * 1e6)}`;

/** Until the 100 tasks' 200 sleeps run (a start returns once the process is spawned; a sandbox may still be being built). */
async function allRunning(marker: string): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (processes().filter((p) => p.cmdline === `sleep ${marker}`).length < 2 * N_TASKS && performance.now() < deadline) await Bun.sleep(5);
}

// ---------- 5. cold start, --version, binary size ----------

async function benchCold() {
  const init: number[] = [];
  const firstByte: number[] = [];
  const exit: number[] = [];
  for (let i = 0; i <= COLD_STARTS; i++) {
    const t0 = performance.now();
    const c = new LineClient(BINARY, mcpArgs, scratch);
    open.add(c);
    await c.request("initialize", initializeParams());
    const t1 = performance.now();
    const t2 = performance.now();
    await closeSession(c);
    if (i === 0) continue; // warm-up (page cache)
    init.push(t1 - t0);
    firstByte.push(c.firstByteAt! - t0);
    exit.push(performance.now() - t2);
  }
  const version: number[] = [];
  for (let i = 0; i <= COLD_STARTS; i++) {
    const ms = await timed(async () => {
      const p = Bun.spawn([BINARY, "--version"], { stdout: "pipe", stderr: "ignore" });
      const [text] = await Promise.all([new Response(p.stdout).text(), p.exited]);
      if (!text.startsWith("agent-shell ")) throw new Error(`--version printed ${text}`);
    });
    if (i > 0) version.push(ms);
  }
  return {
    initialize: stats(init),
    first_byte: stats(firstByte),
    stdin_eof_to_exit: stats(exit),
    version: stats(version),
    binary_mb: round(Bun.file(BINARY).size / 1e6, 1),
  };
}

// ---------- report ----------

const f = (x: number, d = 2) => x.toFixed(d);
const pass = (ok: boolean) => (ok ? "✅" : "❌");

function table(r: any): string {
  const c = r.call;
  const rows: string[][] = [
    ["`bash true` raw floor: Bun.spawn bash -c, pipes read (p50 / p99)", `${f(c.raw.p50)} / ${f(c.raw.p99)} ms`, "", ""],
    ["`bash true` bwrap-per-command floor: Bun.spawn of the default sandbox's bwrap command line (p50 / p99)", `${f(c.raw_bwrap.p50)} / ${f(c.raw_bwrap.p99)} ms`, "", ""],
    [
      "`bash true` containment floor: the kept spawner used directly (kept sandbox, task cgroup, process limit; no tool, no MCP) / unsandboxed (p50)",
      `${f(c.raw_helper.p50)} / ${f(c.raw_helper_off.p50)} ms (${f(c.raw_helper.p50 / c.raw.p50)}× / ${f(c.raw_helper_off.p50 / c.raw.p50)}× raw)`,
      "",
      "",
    ],
    ["kept sandbox against bubblewrap per command: containment floor ÷ bwrap-per-command floor (p50)", `${f(c.raw_helper.p50 / c.raw_bwrap.p50)}×`, "", ""],
    ["`bash true` over MCP, SDK client (p50 / p99)", `${f(c.sdk.p50)} / ${f(c.sdk.p99)} ms`, "", ""],
    ["`bash true` over MCP, line client (p50 / p99)", `${f(c.line.p50)} / ${f(c.line.p99)} ms`, "", ""],
    ["`bash true` over MCP, SDK client, `--sandbox off` (p50 / p99)", `${f(c.sdk_off.p50)} / ${f(c.sdk_off.p99)} ms`, "", ""],
    ["`--sandbox off`: SDK p50 ÷ raw p50", `${f(r.ratios.off, 2)}×`, "≤ 1.2×", pass(r.ratios.off <= 1.2)],
    ["sandboxed default − `--sandbox off` (SDK p50)", `+${f(c.sdk.p50 - c.sdk_off.p50)} ms`, "≤ +1 ms", pass(c.sdk.p50 - c.sdk_off.p50 <= 1)],
    ["sandboxed default: SDK / line client p50 ÷ raw p50", `${f(r.ratios.sdk, 2)}× / ${f(r.ratios.line, 2)}×`, "≤ 1.3×", pass(r.ratios.sdk <= 1.3)],
    ["sandboxed default: SDK p50 ÷ containment floor p50 (what the tool and MCP add)", `${f(c.sdk.p50 / c.raw_helper.p50, 2)}×`, "", ""],
    ["sandboxed default: SDK p50 ÷ bwrap-per-command floor p50", `${f(c.sdk.p50 / c.raw_bwrap.p50, 2)}×`, "", ""],
    [
      `\`bash true\` one call every ${SPACED_GAP_MS} ms (an agent's pace), p50: raw / sandboxed default / \`--sandbox off\``,
      `${f(r.spaced.raw.p50)} / ${f(r.spaced.sdk.p50)} / ${f(r.spaced.sdk_off.p50)} ms (${f(r.spaced.sdk.p50 / r.spaced.raw.p50)}× / ${f(r.spaced.sdk_off.p50 / r.spaced.raw.p50)}×); bwrap-per-command floor ${f(r.spaced.raw_bwrap.p50)} ms`,
      "",
      "",
    ],
    ["at an agent's pace: sandboxed default − `--sandbox off` (SDK p50)", `${r.spaced.sdk.p50 >= r.spaced.sdk_off.p50 ? "+" : "−"}${f(Math.abs(r.spaced.sdk.p50 - r.spaced.sdk_off.p50))} ms`, "≤ +1 ms", pass(r.spaced.sdk.p50 - r.spaced.sdk_off.p50 <= 1)],
    ["no-spawn call (`task_list`) SDK / line p50", `${f(c.sdk_rpc.p50)} / ${f(c.line_rpc.p50)} ms`, "", ""],
    [
      "MCP floor: raw floor + a no-spawn call's round trip, SDK / line (p50), ÷ raw: what any MCP tool that spawns costs at least",
      `${f(c.raw.p50 + c.sdk_rpc.p50)} / ${f(c.raw.p50 + c.line_rpc.p50)} ms (${f((c.raw.p50 + c.sdk_rpc.p50) / c.raw.p50, 2)}× / ${f((c.raw.p50 + c.line_rpc.p50) / c.raw.p50, 2)}×)`,
      "",
      "",
    ],
    ["sandboxed default: SDK / line p50 ÷ MCP floor", `${f(c.sdk.p50 / (c.raw.p50 + c.sdk_rpc.p50), 2)}× / ${f(c.line.p50 / (c.raw.p50 + c.line_rpc.p50), 2)}×`, "", ""],
    [
      "contained MCP floor: containment floor + a no-spawn call's round trip (SDK), sandboxed / `--sandbox off`, ÷ raw: the least an MCP tool that contains each command as agent-shell does can cost (the fg goals are 1.3× / 1.2×)",
      `${f(c.raw_helper.p50 + c.sdk_rpc.p50)} / ${f(c.raw_helper_off.p50 + c.sdk_rpc.p50)} ms (${f((c.raw_helper.p50 + c.sdk_rpc.p50) / c.raw.p50, 2)}× / ${f((c.raw_helper_off.p50 + c.sdk_rpc.p50) / c.raw.p50, 2)}×)`,
      "",
      "",
    ],
    ["sandboxed default / `--sandbox off`: SDK p50 ÷ its contained MCP floor (what the tool adds)", `${f(c.sdk.p50 / (c.raw_helper.p50 + c.sdk_rpc.p50), 2)}× / ${f(c.sdk_off.p50 / (c.raw_helper_off.p50 + c.sdk_rpc.p50), 2)}×`, "", ""],
    [
      "contained MCP floor, measured: a stdio server that only reads each line and starts the command as agent-shell's runtime does (kept spawner, task cgroup, process limit; no SDK, schema, registry, check or shaping: bench/mcp-floor-server.ts), line client p50, sandboxed / `--sandbox off`, ÷ raw",
      `${f(c.line_floor.p50)} / ${f(c.line_floor_off.p50)} ms (${f(c.line_floor.p50 / c.raw.p50, 2)}× / ${f(c.line_floor_off.p50 / c.raw.p50, 2)}×)`,
      "",
      "",
    ],
    [
      "agent-shell, line client p50, sandboxed / `--sandbox off`: ÷ raw; ÷ the measured floor (what the tool adds)",
      `${f(c.line.p50)} / ${f(c.line_off.p50)} ms: ${f(c.line.p50 / c.raw.p50, 2)}× / ${f(c.line_off.p50 / c.raw.p50, 2)}×; ${f(c.line.p50 / c.line_floor.p50, 2)}× / ${f(c.line_off.p50 / c.line_floor_off.p50, 2)}×`,
      "",
      "",
    ],
  ];
  const bg = r.background;
  const ovRatio = bg.overhead.mcp.p50 / bg.overhead.raw.p50;
  rows.push(
    ["background start → completion noticed, overhead beyond the command: raw / agent-shell (median)", `${f(bg.overhead.raw.p50)} / ${f(bg.overhead.mcp.p50)} ms (${f(ovRatio)}×)`, "≤ 1.3×", pass(ovRatio <= 1.3)],
    ["the same, bwrap-per-command floor (bwrap spawned directly) / agent-shell (median)", `${f(bg.overhead.contained.p50)} / ${f(bg.overhead.mcp.p50)} ms (${f(bg.overhead.mcp.p50 / bg.overhead.contained.p50)}×)`, "", ""],
    [
      "the same, MCP floor: raw + two no-spawn round trips (the start and the wait are two calls; SDK) ÷ raw; agent-shell ÷ MCP floor",
      `${f(bg.overhead.raw.p50 + 2 * c.sdk_rpc.p50)} ms: ${f((bg.overhead.raw.p50 + 2 * c.sdk_rpc.p50) / bg.overhead.raw.p50)}×; ${f(bg.overhead.mcp.p50 / (bg.overhead.raw.p50 + 2 * c.sdk_rpc.p50))}×`,
      "",
      "",
    ],
    ["start 100 background tasks at once (line client), median of 3: raw / agent-shell", `${bg.hundred.raw_start_ms} / ${bg.hundred.start_ms} ms (${f(bg.hundred.start_ms / bg.hundred.raw_start_ms)}×; rounds ${bg.hundred.all_start_ms.join(", ")})`, "≤ 1.3×", pass(bg.hundred.start_ms <= 1.3 * bg.hundred.raw_start_ms)],
    ["start 100: bwrap-per-command floor (the same in bwrap, spawned directly) / agent-shell", `${bg.hundred.bwrap_start_ms} / ${bg.hundred.start_ms} ms (${f(bg.hundred.start_ms / bg.hundred.bwrap_start_ms)}×)`, "", ""],
    ["`task_list` of 100 running tasks vs one foreground `true`, line client (medians)", `${f(bg.hundred.list.p50)} vs ${f(c.line.p50)} ms`, "≤ fg round trip", pass(bg.hundred.list.p50 <= c.line.p50)],
    ["kill 100 running tasks (each call returns when its group is gone; line client), median of 3: raw SIGKILL / agent-shell", `${bg.hundred.raw_kill_ms} / ${bg.hundred.kill_ms} ms (rounds ${bg.hundred.all_kill_ms.join(", ")}), ${bg.hundred.survivors} survivors`, "≤ 100 ms, 0 left", pass(bg.hundred.kill_ms <= 100 && bg.hundred.survivors === 0)],
    ["kill 100: bwrap-per-command floor (SIGKILL of the bwrap groups, exits awaited)", `${bg.hundred.bwrap_kill_ms} ms`, "", ""],
    [
      "kill 100 running tasks one `kill_shell` after another, each awaited (line client), median of 3: raw / bwrap-per-command floor (one SIGKILL after another, exit awaited) / agent-shell",
      `${bg.hundred.raw_seq_kill_ms} / ${bg.hundred.bwrap_seq_kill_ms} / ${bg.hundred.seq_kill_ms} ms (rounds ${bg.hundred.all_seq_kill_ms.join(", ")}); agent-shell's survivors of both kills: ${bg.hundred.survivors}`,
      "≤ bash-command-mcp (bench/peers.ts)",
      "",
    ],
    [
      "kill one after another, the floor with kill_shell's semantics (SPEC §3.3): SIGTERM to the group, then until every process of it is gone (grandchildren too; zombies count as gone; /proc polled each turn), 100 in a row, median of 3",
      `${bg.hundred.raw_seq_group_kill_ms} ms; agent-shell ÷ it: ${f(bg.hundred.seq_kill_ms / bg.hundred.raw_seq_group_kill_ms)}×`,
      "",
      "",
    ],
    [
      "first reply of a burst of 100 starts, from its request (median / max of 6 bursts); last reply",
      `${f(bg.hundred.first_reply.p50, 1)} / ${f(bg.hundred.first_reply.max, 1)} ms; last ${f(bg.hundred.last_reply.p50, 1)} ms`,
      "≤ 20 ms",
      pass(bg.hundred.first_reply.p50 <= 20),
    ],
    [
      `\`task_list\` of 100 running tasks, SDK client (checks the output schema) / line client (median of ${LIST_CALLS}, interleaved)`,
      `${f(bg.list.sdk.p50)} / ${f(bg.list.line.p50)} ms (${bg.list.listed} listed)`,
      "≤ bash-command-mcp (bench/peers.ts)",
      "",
    ],
  );
  for (const [name, w] of Object.entries<any>(r.wait)) {
    const label = name === "early_output" ? "output long before exit" : "first output at exit";
    rows.push(
      [`raw floor: Bun.spawn parent sees exit + EOF, ${label} (median / max)`, `${f(w.raw.p50)} / ${f(w.raw.max)} ms`, "", ""],
      [`\`task_output wait\` return after task exit, ${label}, SDK (median / max)`, `${f(w.sdk.p50)} / ${f(w.sdk.max)} ms`, "≤ 10 ms", pass(w.sdk.p50 <= 10)],
      [`\`task_output wait\` return after task exit, ${label}, line (median / max)`, `${f(w.line.p50)} / ${f(w.line.max)} ms`, "≤ 10 ms", pass(w.line.p50 <= 10)],
      [`\`task_finished\` notice after task exit, ${label} (median)`, `${f(w.notice.p50)} ms`, "", ""],
    );
  }
  for (const [name, x] of Object.entries<any>(r.flood)) {
    rows.push([`200 MB flood (${name}): raw / agent-shell`, `${x.raw_mb_s} / ${x.mcp_mb_s} MB/s (${x.raw_ms} / ${x.mcp_ms} ms)`, "", ""]);
    rows.push([`200 MB flood (${name}): time ÷ raw time`, `${f(1 / x.ratio)}×`, "≤ 1.15×", pass(1 / x.ratio <= 1.15)]);
    rows.push([
      `200 MB flood (${name}): spool floor (the raw floor appending each chunk to a file) ÷ raw; agent-shell ÷ spool floor`,
      `${x.spool_floor_ms} ms: ${f(x.spool_floor_ms / x.raw_ms)}×; ${f(x.mcp_ms / x.spool_floor_ms)}×`,
      "",
      "",
    ]);
    rows.push([`200 MB flood (${name}): server peak RSS (idle)`, `${x.peak_rss_mb} MiB (${x.idle_rss_mb} MiB)`, "≤ 100 MiB", pass(x.peak_rss_mb <= 100)]);
  }
  rows.push(
    ["cold start: spawn → initialize response (median / p99)", `${f(r.cold.initialize.p50, 1)} / ${f(r.cold.initialize.p99, 1)} ms`, "≤ 35 ms", pass(r.cold.initialize.p50 <= 35)],
    ["stdin EOF → server exit (median)", `${f(r.cold.stdin_eof_to_exit.p50, 1)} ms`, "", ""],
    ["`agent-shell --version` (median)", `${f(r.cold.version.p50, 1)} ms`, "", ""],
    ["binary size", `${r.cold.binary_mb} MB`, "reported", ""],
  );
  const m = r.machine;
  const head = `Machine: ${m.nproc} × ${m.model}, Bun ${m.bun}, ${m.date}, load ${m.loadavg_at_start}; ${r.bench_seconds} s\n\n`;
  return (
    head +
    "| Metric | Value | Target | |\n|---|---|---|---|\n" +
    rows.map((row) => `| ${row.join(" | ")} |`).join("\n") +
    "\n"
  );
}

async function cleanup() {
  closeHelperFloors();
  for (const s of [...open]) await closeSession(s).catch(() => {});
  rmSync(scratch, { recursive: true, force: true });
}

process.on("SIGINT", () => {
  void cleanup().finally(() => process.exit(130));
});

const results: any = { machine: machine(), binary: BINARY };
try {
  log(`binary ${BINARY}`);
  const sdk = await sdkSession();
  const off = await sdkSession(["--sandbox", "off"]);
  const line = await lineSession();
  const lineOff = await lineSession(["--sandbox", "off"]);
  const floor = await floorSession();
  const floorOff = await floorSession(["--sandbox", "off"]);
  log(`1/5 bash true: ${CALLS} calls per variant, interleaved; then ${SPACED_CALLS} each at an agent's pace`);
  results.call = await benchCall(sdk, off, { line, lineOff, floor, floorOff });
  for (const c of [lineOff, floor, floorOff]) await closeSession(c);
  const raw = results.call.raw.p50;
  results.ratios = { sdk: results.call.sdk.p50 / raw, line: results.call.line.p50 / raw, off: results.call.sdk_off.p50 / raw };
  results.spaced = await benchSpaced(sdk, off);
  log(`2/5 task_output wait latency: ${WAITS} per client and shape`);
  results.wait = await benchWait(sdk, line);
  await closeSession(line);
  log(`3/5 background: completion overhead, 100 tasks`);
  const burst = await lineSession();
  results.background = { overhead: await benchBackgroundOverhead(sdk), hundred: await benchHundred(burst), list: await benchList(sdk, burst) };
  await closeSession(burst);
  await closeSession(sdk);
  await closeSession(off);
  log(`4/5 200 MB floods: ${FLOOD_REPS} per kind`);
  results.flood = await benchFlood();
  log(`5/5 cold start: ${COLD_STARTS}`);
  results.cold = await benchCold();
} finally {
  await cleanup();
}
results.bench_seconds = round((performance.now() - startedAt) / 1000, 1);

// Ours, and the floors' kept sandboxes (their command lines name the scratch dir), once their SIGKILL has landed.
const left = () =>
  processesMatching(BINARY).concat(
    processesMatching("bench-wait-marker"),
    processes().filter((p) => p.cmdline.includes(scratch) && p.pid !== process.pid),
  );
for (const until = performance.now() + 1000; left().length && performance.now() < until; ) await Bun.sleep(20);
const leftovers = left();
if (leftovers.length) log(`WARNING: processes left behind: ${JSON.stringify(leftovers)}`);
results.leftover_processes = leftovers.length;

await Bun.write(join(import.meta.dir, "results.json"), JSON.stringify(results, null, 2) + "\n");
process.stdout.write(table(results));
