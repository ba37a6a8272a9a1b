/**
 * SPEC §16 over SSH: a host with `agent = true` runs agent-shell on the far side over its
 * SSH connection (a channel as the pipe), copied into the remote ~/.cache on first use.
 * The far side is a real sshd on 127.0.0.1 with its own HOME, so it is this machine:
 * its sandbox is the local one.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../helpers/cli.ts";
import { type McpSession, startServer } from "../helpers/mcp.ts";
import { type Sshd, startSshd } from "../helpers/sshd.ts";
import { version } from "../../package.json";

let sshd: Sshd;
let near: McpSession;

beforeAll(async () => {
  sshd = await startSshd();
  const file = join(sshd.dir, "config.toml");
  writeFileSync(file, sshd.hostToml("far") + "agent = true\n");
  near = await startServer({ args: ["--config", file] });
}, 60_000);

afterAll(async () => {
  await near?.close();
  // The far side's daemon lives in the remote HOME's state dir: stop it before the server goes.
  await runCli(["daemon", "stop"], { env: { HOME: sshd.home, XDG_STATE_HOME: join(sshd.home, ".local", "state") } });
  await sshd?.stop();
}, 60_000);

test("an SSH host with agent = true: agent-shell copied into the remote cache, calls forwarded, background ids NAME:bg-N", async () => {
  const cached = join(sshd.home, ".cache", "agent-shell", version, "agent-shell");
  expect(existsSync(cached)).toBe(false);
  const r = await near.call("bash", { command: 'echo "$HOME"; echo e >&2; exit 4', host: "far" });
  expect(r).toMatchObject({ exit_code: 4, success: false, stdout: `${sshd.home}\n`, stderr: "e\n", host: "far" });
  expect(r.sandbox).toBe("workspace-write"); // the far side's own sandbox, as it reports it
  expect(existsSync(cached)).toBe(true);

  const bg = await near.call("bash", { command: "sleep 0.2; echo later", host: "far", run_in_background: true });
  expect(bg.task_id).toMatch(/^far:bg-\d+$/);
  const out = await near.call("task_output", { task_id: bg.task_id, wait: true, timeout: 30 });
  expect(out).toMatchObject({ status: "completed", exit_code: 0, stdout: "later\n", host: "far" });
  const list = await near.call("task_list", { host: "far" });
  expect(list.tasks.map((t: any) => t.task_id)).toContain(bg.task_id);
}, 120_000);
