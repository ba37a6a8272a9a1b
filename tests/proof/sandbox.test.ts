/**
 * Sandbox escape attempts on `working_directory`: `..` chains, symlinks (also chained) to
 * outside, /proc/self/cwd, /proc/<pid>/root and /proc/<pid>/cwd, absolute paths, prefix
 * look-alikes, and a symlink swapped in after validation (a race against the check).
 * Every attempt must be refused (ACCESS_DENIED, or NOT_FOUND where the path does not
 * exist) and nothing may run outside the allowed root.
 *
 * What this does NOT cover, by design: allowed paths constrain where a command *starts*;
 * a command is free to `cd /` itself. They are a guard against mistakes, not a jail.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { HEAVY, proofLine, RawSession, tempDir } from "./helpers.ts";

const RACE_ROUNDS = HEAVY ? 50_000 : 10_000;

let root: string; // the server's cwd = the only allowed path
let outside: string; // a sibling directory outside it
let lookalike: string; // `<root>-evil`: shares the root's prefix
let s: RawSession;
let spy: ReturnType<typeof Bun.spawn>; // a process sitting in `outside`, for /proc/<pid>/cwd
const marker = `proof-ran-${process.pid}`;

beforeAll(async () => {
  root = tempDir("as-proof-root-");
  outside = tempDir("as-proof-outside-");
  lookalike = root + "-evil";
  mkdirSync(lookalike);
  mkdirSync(join(root, "sub", "deeper"), { recursive: true });
  writeFileSync(join(root, "file.txt"), "x");
  symlinkSync(outside, join(root, "link-out"));
  symlinkSync(join(root, "link-out"), join(root, "link-chain"));
  symlinkSync("../../" + basename(outside), join(root, "sub", "rel-link-out"));
  symlinkSync("/", join(root, "link-root"));
  symlinkSync(join(root, "sub"), join(root, "link-in"));
  spy = Bun.spawn(["sleep", "600"], { cwd: outside, stdout: "ignore", stderr: "ignore" });
  s = new RawSession({ cwd: root });
  await s.initialize();
});

afterAll(async () => {
  spy?.kill("SIGKILL");
  await s?.close();
  for (const d of [root, outside, lookalike]) rmSync(d, { recursive: true, force: true });
});

/** Runs a marker-dropping command in `wd`; returns the result and where the command ran, if it did. */
async function attempt(wd: string, n: number): Promise<{ code?: string; ranIn?: string; error?: string }> {
  const r = await s.call("bash", { command: `touch ${marker}-${n}; pwd -P`, working_directory: wd }, 30_000);
  if (r.error_code) return { code: r.error_code, error: r.error };
  return { ranIn: String(r.stdout).trim() };
}

/** Markers left anywhere we can think of outside the root. */
function markersOutside(): string[] {
  const found: string[] = [];
  for (const dir of ["/", "/tmp", "/proc/self/cwd", outside, lookalike, dirname(root)]) {
    try {
      for (const f of readdirSync(dir)) if (f.startsWith(marker)) found.push(join(dir, f));
    } catch {}
  }
  return found;
}

describe("working_directory escapes", () => {
  test("static escape attempts are refused and run nothing outside", async () => {
    const outName = basename(outside);
    const refusals: Array<[string, string]> = [
      [`../${outName}`, "ACCESS_DENIED"],
      [`sub/../../${outName}`, "ACCESS_DENIED"],
      [`sub/deeper/../../../${outName}`, "ACCESS_DENIED"],
      ["../../../../../../../../..", "ACCESS_DENIED"],
      ["..//..//", "ACCESS_DENIED"],
      ["..", "ACCESS_DENIED"],
      [outside, "ACCESS_DENIED"],
      ["/", "ACCESS_DENIED"],
      ["/tmp", "ACCESS_DENIED"],
      ["/etc", "ACCESS_DENIED"],
      [lookalike, "ACCESS_DENIED"],
      [`../${basename(lookalike)}`, "ACCESS_DENIED"],
      [`${root}/../${outName}`, "ACCESS_DENIED"],
      ["link-out", "ACCESS_DENIED"],
      ["link-chain", "ACCESS_DENIED"],
      ["sub/rel-link-out", "ACCESS_DENIED"],
      ["link-root", "ACCESS_DENIED"],
      ["link-root/tmp", "ACCESS_DENIED"],
      ["link-in/../..", "ACCESS_DENIED"],
      ["/proc/self/root", "ACCESS_DENIED"],
      [`/proc/${process.pid}/root`, "ACCESS_DENIED"],
      [`/proc/${s.pid}/root`, "ACCESS_DENIED"],
      [`/proc/${spy.pid}/cwd`, "ACCESS_DENIED"],
      [`/proc/${s.pid}/cwd/../${outName}`, "ACCESS_DENIED"],
      ["/proc/self/cwd/..", "ACCESS_DENIED"],
      ["/proc/1/cwd", "ACCESS_DENIED"],
      [`../${outName}-does-not-exist`, "ACCESS_DENIED"],
      ["/no/such/dir/anywhere", "ACCESS_DENIED"],
      ["does-not-exist", "NOT_FOUND"],
      ["sub/../nope", "NOT_FOUND"],
      ["%2e%2e", "NOT_FOUND"],
      ["~", "NOT_FOUND"],
      ["file.txt", "INVALID_ARGUMENT"],
    ];
    const wrong: string[] = [];
    let n = 0;
    for (const [wd, want] of refusals) {
      const r = await attempt(wd, n++);
      if (r.code !== want) wrong.push(`${wd}: want ${want}, got ${r.code ?? `ran in ${r.ranIn}`}`);
      if (r.code === "ACCESS_DENIED" && !String(r.error).includes("outside allowed paths")) wrong.push(`${wd}: message lacks 'outside allowed paths'`);
    }
    // Inside the root these are fine, and must run exactly there.
    const allowed: Array<[string, string]> = [
      [".", root],
      ["sub", join(root, "sub")],
      ["sub/deeper/..", join(root, "sub")],
      ["link-in", join(root, "sub")],
      [root, root],
      ["link-out/..", root], // `..` is resolved lexically first (as `cd` does), so this is the root itself
      ["/proc/self/cwd", root], // the server's own cwd: inside, and resolved to the real path
      [`/proc/${s.pid}/cwd/sub`, join(root, "sub")],
    ];
    for (const [wd, where] of allowed) {
      const r = await attempt(wd, n++);
      if (r.ranIn !== where) wrong.push(`${wd}: want to run in ${where}, got ${r.code ?? r.ranIn}`);
    }
    const escaped = markersOutside();
    for (const f of escaped) rmSync(f, { force: true });
    proofLine("sandbox-static", { tried: n, crashes: s.alive ? 0 : 1, hangs: 0, orphans: 0, bytes_lost: 0 }, `refused=${refusals.length} allowed=${allowed.length} wrong=${wrong.length} escaped=${escaped.length}`);
    expect(wrong).toEqual([]);
    expect(escaped).toEqual([]);
  }, 120_000);

  test(`a directory swapped for a symlink to outside while being validated (${RACE_ROUNDS} rounds)`, async () => {
    // A racer flips <root>/swap between a real directory and a symlink to `outside` as fast
    // as it can, while the server is asked to run in "swap". The check (realpath) and the
    // child's chdir are separate steps, so this is a time-of-check/time-of-use race.
    const swap = join(root, "swap");
    mkdirSync(swap);
    // Plain syscalls in a loop (python3, one of the suite's system deps): flips every few µs, so the
    // window between the server's check and the child's chdir is hit often enough to measure.
    const racer = Bun.spawn(
      [
        "python3",
        "-c",
        [
          "import os, sys",
          "os.chdir(sys.argv[1])",
          "while True:",
          "    try: os.rename('swap', 'swap.real')",
          "    except OSError: pass",
          "    try: os.symlink(sys.argv[2], 'swap')",
          "    except OSError: pass",
          "    try: os.unlink('swap')",
          "    except OSError: pass",
          "    try: os.rename('swap.real', 'swap')",
          "    except OSError: pass",
        ].join("\n"),
        root,
        outside,
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    const tally: Record<string, number> = {};
    const outsideRuns: string[] = [];
    try {
      for (let i = 0; i < RACE_ROUNDS; i++) {
        const r = await s.call("bash", { command: "readlink /proc/$$/cwd", working_directory: "swap" }, 30_000); // the kernel's view
        let outcome: string;
        if (r.error_code) outcome = r.error_code;
        else {
          const where = String(r.stdout).trim();
          // the racer renames the real directory to swap.real: still inside the root
          outcome = where === root || where.startsWith(root + "/") ? "ran-inside" : "RAN-OUTSIDE";
          if (outcome === "RAN-OUTSIDE") outsideRuns.push(where);
        }
        tally[outcome] = (tally[outcome] ?? 0) + 1;
      }
    } finally {
      racer.kill("SIGKILL");
      await racer.exited;
    }
    proofLine("sandbox-swap-race", { tried: RACE_ROUNDS, crashes: s.alive ? 0 : 1, hangs: 0, orphans: 0, bytes_lost: 0 }, `outcomes=${JSON.stringify(tally)}`);
    expect(existsSync(root)).toBe(true);
    // The server pins the checked directory (the child starts in /proc/self/fd/N of the
    // validated directory). The child reports the kernel's view of its cwd: bash's own
    // `pwd -P` re-resolves its PWD string through the symlink the racer keeps swapping.
    expect(outsideRuns).toEqual([]);
  }, 300_000);
});
