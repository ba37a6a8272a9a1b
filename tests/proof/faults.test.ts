/**
 * Faults: the server SIGKILLed at random moments while tasks start, run and flood output
 * (no orphan, ever: SPEC §5 gives the watchdog 2 s); and a full disk under the spool (a 2 MB
 * tmpfs as --state-dir: tasks go on, `spool_error` is reported by task_output and task_list).
 * Reproduce a run with PROOF_SEED=<printed seed>.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { HEAVY, proofLine, proofSeed, RawSession, Rng, tempDir, waitNoEnvProcess } from "./helpers.ts";
import { processes } from "../helpers/procs.ts";

const ROUNDS = Number(process.env.PROOF_KILL_ROUNDS ?? (HEAVY ? 100 : 20));
const MARK = "AGENT_SHELL_PROOF_FAULT";
/** SPEC §5: every group gone within 2 s of a SIGKILL; 1 s more for a busy 2-core machine. */
const ORPHAN_GRACE_MS = 3000;

/** mount/umount need root: run directly as root, else through passwordless sudo (as scripts/ensure-system-deps.sh does). */
function asRoot(argv: string[]): void {
  if (process.getuid?.() === 0) execFileSync(argv[0]!, argv.slice(1));
  else execFileSync("sudo", ["-n", ...argv]);
}

describe("faults", () => {
  test(
    `SIGKILL of the server at random moments, ${ROUNDS} rounds: no orphan ever`,
    async () => {
      const seed = proofSeed();
      const rng = new Rng(seed);
      const orphanRounds: string[] = [];
      let orphans = 0;
      let startedTotal = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const value = `${process.pid}-${round}`;
        // Half the rounds unsandboxed: their escapes are held by the task cgroups, the others' by PID namespaces.
        const mode = rng.pick(["off", "workspace-write"] as const);
        const s = new RawSession({ env: { [MARK]: value }, args: ["--sandbox", mode] });
        const phase = rng.pick(["during-initialize", "during-burst", "while-running", "during-foreground", "during-flood"] as const);
        // Mostly early: the first tasks' start is where a kill is most likely to find a gap.
        const delay = rng.chance(0.7) ? rng.int(0, 40) : rng.int(40, 250);
        try {
          if (phase !== "during-initialize") await s.initialize();
          else void s.initialize().catch(() => {});
          const n = rng.int(1, 20);
          const starts: Promise<unknown>[] = [];
          for (let i = 0; i < n; i++) {
            const command = rng.pick([
              "sleep 300",
              "sleep 300 & sleep 300 & wait",
              "yes flood | head -c 50000000 > /dev/null; sleep 300",
              "while :; do echo tick; sleep 0.01; done",
              "bash -c 'trap \"\" TERM; sleep 300'",
              // Descendants that leave the group, the session, or agent-shell's variables (SPEC §14).
              "setsid sleep 300 & sleep 300",
              "nohup sleep 300 >/dev/null 2>&1 & sleep 300",
              "env -u AGENT_SHELL_OWNER setsid -f sleep 300; sleep 300",
              "(sleep 300 &); sleep 300",
            ]);
            starts.push(s.call("bash", { command, run_in_background: true }, 10_000).catch(() => null));
          }
          if (phase === "during-foreground") void s.call("bash", { command: "sleep 300" }, 10_000).catch(() => {});
          if (phase === "during-flood") void s.call("bash", { command: "yes flood-fg | head -c 100000000" }, 10_000).catch(() => {});
          if (phase === "while-running") await Promise.all(starts);
          await Bun.sleep(delay);
          startedTotal += n;
        } finally {
          s.proc.kill("SIGKILL");
          await s.exited;
        }
        // Sandboxes built ahead also carry the server's environment, and their bwrap command
        // line names the session's directory.
        const cwd = s.cwd;
        const named = () => processes().filter((p) => p.cmdline.includes(cwd)).map((p) => p.pid);
        const left = await waitNoEnvProcess(MARK, value, ORPHAN_GRACE_MS);
        for (const deadline = Date.now() + ORPHAN_GRACE_MS; named().length && Date.now() < deadline; ) await Bun.sleep(20);
        left.push(...named());
        // Only now: a bwrap that was building a sandbox when the server died would make its
        // hidden state dir's mount point again (on the host's /tmp) if it were removed first.
        s.cleanup();
        if (left.length) {
          orphans += left.length;
          const desc = left.map((pid) => processes().find((p) => p.pid === pid)?.cmdline ?? String(pid));
          orphanRounds.push(`round ${round} (${phase}, sandbox ${mode}, +${delay} ms): ${left.length} left: ${desc.slice(0, 5).join(" | ")}`);
          for (const pid of left) {
            try {
              process.kill(pid, "SIGKILL");
            } catch {}
          }
        }
      }
      proofLine("sigkill", { tried: ROUNDS, crashes: 0, hangs: 0, orphans, bytes_lost: 0 }, `seed=${seed} tasks_started=${startedTotal}`);
      if (orphanRounds.length) console.log("orphans:\n  " + orphanRounds.join("\n  "));
      expect(orphanRounds).toEqual([]);
    },
    HEAVY ? 900_000 : 120_000,
  );

  describe("a full disk under the spool", () => {
    let mnt: string | undefined; // made inside the test: a filtered-out test must leave nothing behind
    let mounted = false;
    let s: RawSession | undefined;
    afterAll(async () => {
      if (s?.alive) await s.close();
      if (mounted) asRoot(["umount", mnt!]);
      if (mnt) rmSync(mnt, { recursive: true, force: true });
    });

    test("tasks go on and spool_error is reported in task_output and task_list", async () => {
      mnt = tempDir("as-proof-tmpfs-");
      asRoot(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt]);
      mounted = true;
      const stateDir = join(mnt, "state");
      mkdirSync(stateDir);
      // The cap on all logs (a tenth of the free space by default) would stop the spool first: set above the disk.
      s = new RawSession({ stateDir, env: { [MARK]: "disk", AGENT_SHELL_MAX_STATE_BYTES: String(1024 * 1024 * 1024) } });
      await s.initialize();
      // 5 MB into a 2 MB disk: the spool fills it; the task must still finish, all bytes counted.
      const big = await s.call("bash", { command: "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 5000000; echo done >&2", run_in_background: true });
      expect(big.task_id).toBeDefined();
      const out = await s.call("task_output", { task_id: big.task_id, wait: true, timeout: 60, tail_lines: 1 });
      expect(out.status).toBe("completed");
      expect(out.exit_code).toBe(0);
      expect(out.stdout_total_bytes).toBe(5_000_000);
      expect(out.stderr).toBe("done\n");
      expect(String(out.spool_error)).toContain("no space left on device");
      const listed = await s.call("task_list", {});
      const entry = listed.tasks.find((t: any) => t.task_id === big.task_id);
      expect(String(entry?.spool_error)).toContain("no space left on device");

      // With the disk still full: a new background task and a foreground call both work.
      const after = await s.call("bash", { command: "echo still-works; seq 1 100000 | tail -1", run_in_background: true });
      const afterOut = await s.call("task_output", { task_id: after.task_id, wait: true, timeout: 30 });
      const fg = await s.call("bash", { command: "seq 1 200000 | wc -l" });
      const fgBig = await s.call("bash", { command: "yes x | head -c 300000 | wc -c; yes y | head -c 300000" });
      console.log(
        `full disk: big=${JSON.stringify({ status: out.status, total: out.stdout_total_bytes, spool_error: out.spool_error })} ` +
          `after=${JSON.stringify({ status: afterOut.status, stdout: afterOut.stdout, error: after.error ?? null })} ` +
          `fg=${JSON.stringify({ stdout: fg.stdout, error: fg.error ?? null })} fgBig=${JSON.stringify({ total: String(fgBig.stdout ?? "").length, truncated: fgBig.stdout_truncated, spool_error: fgBig.spool_error, error: fgBig.error ?? null })}`,
      );
      expect(afterOut.status).toBe("completed");
      expect(afterOut.stdout).toBe("still-works\n100000\n");
      expect(fg.stdout).toBe("200000\n");
      expect(fgBig.exit_code).toBe(0);
      const code = await s.close();
      expect(code).toBe(0);
      expect(await waitNoEnvProcess(MARK, "disk", 3000)).toEqual([]);
      proofLine("full-disk", { tried: 4, crashes: 0, hangs: 0, orphans: 0, bytes_lost: 0 }, `spool_error=${JSON.stringify(String(out.spool_error).replace(/ \(\/.*\)$/, ""))}`);
    }, 120_000);
  });
});
