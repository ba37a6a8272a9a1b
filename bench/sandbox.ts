/**
 * Cost of the sandbox (SPEC §11: at most +1 ms median for a foreground `true`).
 * Same run, interleaved: a server with `--sandbox off` and one with the default
 * (workspace-write, namespaces level) answer the same calls in alternation; then 100
 * background tasks on each; then the raw spawn floor of the bwrap option sets we tried.
 *   bun run build.ts && bun run bench/sandbox.ts [calls]
 */
import { closeSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { landlockRuleset } from "../src/sandbox/landlock/ruleset.ts";
import { LineClient, machine, round, stats } from "./lib.ts";

const BINARY = process.env.AGENT_SHELL_BINARY ?? resolve(import.meta.dir, "../dist/agent-shell");
const CALLS = Number(process.argv[2] ?? 300);
const cwd = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-sbx-")));
const state = realpathSync(mkdtempSync(join(tmpdir(), "as-bench-sbx-state-")));
// Removed however the run ends (a server that dies mid-run throws out of the middle).
process.on("exit", () => {
  rmSync(cwd, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
});

const summary = (xs: number[]) => {
  const s = stats(xs);
  return { p50: round(s.p50), p99: round(s.p99), mean: round(s.mean), n: s.n };
};

async function server(mode: string): Promise<LineClient> {
  const c = new LineClient(BINARY, ["mcp", "--state-dir", join(state, mode), "--sandbox", mode], cwd);
  await c.initialize();
  return c;
}

const off = await server("off");
const on = await server("workspace-write");
const check = await on.call("bash", { command: "true" });
if (check.result.sandbox !== "workspace-write") throw new Error(`the sandboxed server is not sandboxed: ${JSON.stringify(check.result)}`);

// Warm-up, then alternate so both see the same machine noise.
for (let i = 0; i < 20; i++) {
  await off.call("bash", { command: "true" });
  await on.call("bash", { command: "true" });
}
const fg: Record<string, number[]> = { off: [], on: [] };
for (let i = 0; i < CALLS; i++) {
  for (const [name, c] of i % 2 ? ([["off", off], ["on", on]] as const) : ([["on", on], ["off", off]] as const)) {
    const t = performance.now();
    await c.call("bash", { command: "true" });
    fg[name]!.push(performance.now() - t);
  }
}

async function hundredBackground(c: LineClient): Promise<number> {
  const t = performance.now();
  const ids = await Promise.all(Array.from({ length: 100 }, () => c.call("bash", { command: "true", run_in_background: true }).then((r) => r.result.task_id)));
  await c.call("task_output", { task_ids: ids, wait: true, until: "all", timeout: 60 });
  return performance.now() - t;
}
const bg = { off: [] as number[], on: [] as number[] };
for (let round_ = 0; round_ < 3; round_++) {
  bg.off.push(await hundredBackground(off));
  bg.on.push(await hundredBackground(on));
}
await off.close();
await on.close();

/** The floor: bwrap option sets spawned directly (no agent-shell), `true` inside. */
function rawFloor(argv: string[], n = 200): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    Bun.spawnSync(argv, { stdout: "ignore", stderr: "ignore" });
    out.push(performance.now() - t);
  }
  return out;
}
const landlockPolicy = { mode: "workspace-write" as const, writableRoots: [cwd, "/tmp"], readOnlyUnderWritable: [], denyRead: [join(process.env.HOME ?? "/root", ".ssh")], network: true, loopback: true, allowUnixSockets: [], workspaceRoots: [] };
const base = ["bwrap", "--unshare-pid", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/"];
const raw = {
  "bash -c true": summary(rawFloor(["bash", "-c", "true"])),
  "bwrap ro-bind / (no dev, no proc)": summary(rawFloor([...base, "bash", "-c", "true"])),
  "bwrap + --dev-bind /dev /dev": summary(rawFloor([...base, "--dev-bind", "/dev", "/dev", "bash", "-c", "true"])),
  "bwrap + --dev /dev": summary(rawFloor([...base, "--dev", "/dev", "bash", "-c", "true"])),
  "bwrap + --dev /dev --proc /proc (chosen)": summary(rawFloor([...base, "--dev", "/dev", "--proc", "/proc", "bash", "-c", "true"])),
  "bwrap chosen + --unshare-user": summary(rawFloor([...base, "--unshare-user", "--dev", "/dev", "--proc", "/proc", "bash", "-c", "true"])),
  "bwrap chosen + --unshare-net": summary(rawFloor([...base, "--unshare-net", "--dev", "/dev", "--proc", "/proc", "bash", "-c", "true"])),
  // The Landlock level: the spawn helper restricting the command, then exec'ing bash.
  "landlock through the spawn helper": summary(landlockThroughHelper(300)),
};

/** The built helper run directly with the ruleset and request in files (its fds 3 and 4). */
function landlockThroughHelper(n: number): number[] {
  writeFileSync(join(state, "request"), [cwd, "null", "3", "bash", "-c", "true", "PATH=/usr/bin:/bin"].map((f) => `${f}\0`).join(""));
  writeFileSync(join(state, "ruleset"), landlockRuleset(landlockPolicy));
  const helper = resolve(import.meta.dir, "../build/agent-shell-helper");
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const fds = [openSync(join(state, "request"), "r"), openSync(join(state, "ruleset"), "r")];
    const t = performance.now();
    Bun.spawnSync([helper, "start", "--request", "3", "--landlock", "4", "--drop-caps"], { stdio: ["ignore", "ignore", "ignore", ...fds] } as never);
    out.push(performance.now() - t);
    for (const fd of fds) closeSync(fd);
  }
  return out;
}

const fgOff = summary(fg.off!);
const fgOn = summary(fg.on!);
const report = {
  date: new Date().toISOString(),
  machine: machine(),
  foreground_true_ms: { off: fgOff, sandboxed: fgOn, added_median_ms: round(fgOn.p50 - fgOff.p50) },
  background_100_tasks_ms: { off: summary(bg.off), sandboxed: summary(bg.on) },
  raw_spawn_ms: raw,
};
console.log(JSON.stringify(report, null, 2));
