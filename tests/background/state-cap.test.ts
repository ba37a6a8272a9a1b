/**
 * SPEC §26 (disk): all of agent-shell's task logs together stay under config
 * max_state_bytes; the oldest finished tasks' logs go first (the tasks stay, their status
 * and what memory holds); a running task whose log meets the cap keeps running and
 * reports spool_error.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type McpSession, startServer } from "../helpers/mcp.ts";

const CAP = 300_000;
let dir: string;
let s: McpSession;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync("/var/tmp/as-test-state-cap-"));
  writeFileSync(join(dir, "config.toml"), `max_state_bytes = ${CAP}\n`);
  s = await startServer({ args: ["--config", join(dir, "config.toml")] });
});
afterAll(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Bytes of every task log file under the state dir. */
function logBytes(root = s.stateDir): number {
  let sum = 0;
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".log")) sum += statSync(join(entry.parentPath, entry.name)).size;
  }
  return sum;
}

const writes = (n: number, letter: string) => `head -c ${n} /dev/zero | tr '\\0' ${letter}`;

test("the oldest finished task's logs go first; a running task meeting the cap keeps running and reports spool_error", async () => {
  const a = await s.call("bash", { command: writes(200_000, "a"), run_in_background: true });
  const aDone = await s.call("task_output", { task_id: a.task_id, wait: true, tail_lines: 0 });
  expect(aDone).toMatchObject({ status: "completed", exit_code: 0 });
  expect(statSync(aDone.stdout_path).size).toBe(200_000);

  // b's 200 KB do not fit beside a's: a's log goes, b's is whole.
  const b = await s.call("bash", { command: writes(200_000, "b"), run_in_background: true });
  const bDone = await s.call("task_output", { task_id: b.task_id, wait: true, tail_lines: 0 });
  expect(bDone.spool_error).toBeUndefined();
  expect(statSync(bDone.stdout_path).size).toBe(200_000);
  expect(existsSync(aDone.stdout_path)).toBe(false);
  const aAfter = await s.call("task_output", { task_id: a.task_id, offset: 199_990, length: 10 });
  expect(aAfter).toMatchObject({ status: "completed", exit_code: 0 }); // the task stays, read from memory
  expect(aAfter.stdout).toBe("aaaaaaaaaa");
  expect(aAfter.spool_error).toContain("max_state_bytes (300000)");
  expect(aAfter.stdout_path).toBeUndefined();
  expect(logBytes()).toBeLessThanOrEqual(CAP);

  // c writes 400 KB and stays: b's log goes, then c's spool stops at the cap; c runs on.
  const c = await s.call("bash", { command: `${writes(400_000, "c")}; exec sleep 300`, run_in_background: true });
  let cNow = await s.call("task_output", { task_id: c.task_id, tail_lines: 0 });
  for (const deadline = Date.now() + 20_000; cNow.spool_error === undefined && Date.now() < deadline; ) {
    await Bun.sleep(50); // no event tells a client that a spool stopped: its task_output is polled
    cNow = await s.call("task_output", { task_id: c.task_id, tail_lines: 0 });
  }
  expect(cNow.status).toBe("running");
  expect(cNow.spool_error).toMatch(/^spooling stopped at 300000 bytes: max_state_bytes \(300000\) reached .*the task keeps running$/);
  expect(existsSync(bDone.stdout_path)).toBe(false);
  expect(statSync(cNow.stdout_path).size).toBe(CAP);
  expect(logBytes()).toBeLessThanOrEqual(CAP);
  const listed = await s.call("task_list", {});
  expect(listed.tasks.find((t: any) => t.task_id === c.task_id)).toMatchObject({ status: "running", spool_error: cNow.spool_error });
  await s.call("kill_shell", { task_id: c.task_id });
}, 60_000);
