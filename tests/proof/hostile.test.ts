/**
 * Hostile input (SPEC §14), as proof rows: oversized and unreadable MCP lines each get one
 * JSON-RPC error and the server keeps serving with bounded memory; forged meta.json files
 * pointing at processes the test started make the start-up sweep signal nothing.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { alive, waitForExit } from "../helpers/mcp.ts";
import { HEAVY, proofLine, RawSession, tempDir } from "./helpers.ts";

const MiB = 1024 * 1024;

function vmHwmMb(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

describe("hostile MCP lines", () => {
  test("oversized, invalid and non-JSON-RPC lines: one error each, the server keeps answering", async () => {
    const s = new RawSession();
    let tried = 0;
    let hangs = 0;
    const codes: Record<string, number> = {};
    try {
      await s.initialize();
      const before = vmHwmMb(s.pid);
      const bad: Array<string | Uint8Array> = [
        ...Array.from({ length: HEAVY ? 20 : 4 }, (_, i) => "z".repeat((11 + i * 7) * MiB) + "\n"),
        "{this is not json\n",
        '{"jsonrpc":"2.0","id":1,"method":\n',
        new Uint8Array([0xff, 0xfe, 0x00, 0x7b, 10]),
        "[1, 2, 3\n",
        '"a string"\n',
        "42\n",
        "[]\n",
        '{"jsonrpc":"2.0"}\n',
      ];
      for (const line of bad) {
        tried++;
        const reply = await s.expect("null", line, 20_000);
        if (reply === null) hangs++;
        else codes[String(reply.error?.code)] = (codes[String(reply.error?.code)] ?? 0) + 1;
        const ping = await s.request(s.id(), "ping", undefined, 10_000);
        if (ping === null) hangs++;
      }
      const growth = Math.round(vmHwmMb(s.pid) - before);
      const echo = await s.call("bash", { command: "echo still-serving" });
      proofLine("hostile-lines", { tried, crashes: s.alive ? 0 : 1, hangs, orphans: 0, bytes_lost: 0 }, `replies=${JSON.stringify(codes)} peak_rss_growth_mb=${growth}`);
      expect(hangs).toBe(0);
      expect(echo.stdout).toBe("still-serving\n");
      expect(codes["-32700"]! + codes["-32600"]!).toBe(tried);
      expect(growth).toBeLessThan(100);
    } finally {
      await s.close();
    }
  }, 120_000);
});

describe("forged meta.json", () => {
  const victims: number[] = [];
  afterAll(async () => {
    for (const pid of victims) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {}
      await waitForExit(pid, 5000).catch(() => {});
    }
  });

  test("every recorded group that agent-shell cannot prove it started is left alone", async () => {
    const stateDir = tempDir("as-proof-forged-");
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    // Forgeries from naive to careful: the real start time can be read by anyone, the marker cannot be planted.
    const forgeries = [
      (pid: number, start: string) => ({ pgid: pid }),
      (pid: number, start: string) => ({ pgid: pid, pgid_start: start }),
      (pid: number, start: string) => ({ pgid: pid, pgid_start: start, owner_token: "1-forged" }),
      (pid: number, start: string) => ({ pgid: pid, pgid_start: String(Number(start) + 1), owner_token: "1-forged" }),
      (pid: number, start: string) => ({ pgid: pid, owner_token: "1-forged" }),
    ];
    forgeries.forEach((forge, i) => {
      const p = Bun.spawn(["sleep", "300"], { detached: true, stdio: ["ignore", "ignore", "ignore"] });
      victims.push(p.pid);
      const stat = readFileSync(`/proc/${p.pid}/stat`, "latin1");
      const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
      const dir = join(stateDir, "owners", `1-forged${i}`, "tasks", "bg-1");
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(
        join(dir, "meta.json"),
        JSON.stringify({ task_id: "bg-1", kind: "bash", cwd: "/", tty: false, pid: p.pid, boot_id: boot, started_at: new Date().toISOString(), status: "running", ...forge(p.pid, start) }),
      );
    });
    const s = new RawSession({ stateDir });
    try {
      await s.initialize(); // the sweep runs before the server answers
      const signalled = victims.filter((pid) => !alive(pid)).length;
      proofLine("forged-meta", { tried: forgeries.length, crashes: s.alive ? 0 : 1, hangs: 0, orphans: 0, bytes_lost: 0 }, `signalled=${signalled}`);
      expect(signalled).toBe(0);
    } finally {
      // Removed even if closing fails (a server that died mid-test).
      await s.close().catch(() => {});
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 60_000);
});
