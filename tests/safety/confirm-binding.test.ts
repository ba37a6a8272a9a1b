/**
 * SPEC §14: a confirmation binds the whole request (command, working_directory, env,
 * stdin, tty, host, sandbox), belongs to one connection, expires after 10 minutes, is
 * capped at 100 pending, and costs no memory worth speaking of when left unanswered.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { readDaemonToken } from "../../src/mcp/daemon/daemon-token.ts";
import { SocketTransport } from "../../src/mcp/transports/socket-transport.ts";
import { CONFIRMATION_TTL_MS, MAX_PENDING, PendingConfirmations, requestBinding } from "../../src/safety/confirmation/confirmations.ts";
import { cliSandbox } from "../helpers/cli.ts";
import { startServer, type McpSession } from "../helpers/mcp.ts";

let s: McpSession;
beforeAll(async () => {
  s = await startServer();
  mkdirSync(join(s.cwd, "a"));
  mkdirSync(join(s.cwd, "b"));
});
afterAll(async () => {
  await s?.close();
});

/** Flags `args` (first call), then sends `confirmed: true` with `changed` instead. */
async function confirmWith(args: Record<string, unknown>, changed: Record<string, unknown>) {
  const first = await s.call("bash", args);
  expect(first.needs_confirmation).toBe(true);
  return s.call("bash", { ...changed, confirmed: true });
}

describe("a confirmation binds the whole request", () => {
  const rm = (dir: string) => ({ command: "rm -f victim.txt && echo removed", working_directory: dir });

  test("another working_directory is refused; the approved one still runs, once", async () => {
    writeFileSync(join(s.cwd, "a", "victim.txt"), "a");
    writeFileSync(join(s.cwd, "b", "victim.txt"), "b");
    const other = await confirmWith(rm("a"), rm("b"));
    expect(other.error_code).toBe("BLOCKED");
    expect(other.error).toContain("working_directory");
    expect(existsSync(join(s.cwd, "b", "victim.txt"))).toBe(true);
    const approved = await s.call("bash", { ...rm("a"), confirmed: true });
    expect(approved.stdout).toBe("removed\n");
    expect((await s.call("bash", { ...rm("a"), confirmed: true })).error_code).toBe("BLOCKED");
  });

  test("an added env entry (a BASH_ENV payload), other stdin, tty or sandbox is refused", async () => {
    const base = { command: "rm -f nothing-here.txt" };
    const payload = join(s.cwd, "payload.sh");
    writeFileSync(payload, `echo pwned > ${join(s.cwd, "pwned.txt")}\n`);
    for (const changed of [{ env: { BASH_ENV: payload } }, { stdin: "y\n" }, { tty: true }, { sandbox: "off" }]) {
      const r = await confirmWith(base, { ...base, ...changed });
      expect({ changed, code: r.error_code }).toEqual({ changed, code: "BLOCKED" });
    }
    expect(existsSync(join(s.cwd, "pwned.txt"))).toBe(false);
  });

  test("the same request with its keys in another order is the same request", async () => {
    const args = { command: "rm -f nothing.txt", env: { A: "1", B: "2" }, working_directory: "a" };
    expect((await s.call("bash", args)).needs_confirmation).toBe(true);
    const r = await s.call("bash", { confirmed: true, working_directory: "a", env: { B: "2", A: "1" }, command: "rm -f nothing.txt" });
    expect(r.exit_code).toBe(0);
  });
});

describe("confirmations belong to one daemon connection", () => {
  test("a second client cannot use the first client's confirmation; the first can", async () => {
    const sb = cliSandbox();
    try {
      await sb.run(["daemon", "start"]);
      const sock = join(sb.stateDir, "daemon.sock");
      const open = async () => {
        const socket = connect(sock);
        await new Promise((r) => socket.once("connect", r));
        const client = new Client({ name: "confirm-test", version: "0" });
        await client.connect(new SocketTransport(socket, { send: JSON.stringify({ token: readDaemonToken(sock), cwd: sb.cwd }) }));
        const call = async (args: Record<string, unknown>) => (await client.callTool({ name: "bash", arguments: args })).structuredContent as Record<string, any>;
        return { client, call };
      };
      const one = await open();
      const two = await open();
      const args = { command: "rm -f nothing.txt && echo ran", working_directory: sb.cwd };
      expect((await one.call(args)).needs_confirmation).toBe(true);
      expect((await two.call({ ...args, confirmed: true })).error_code).toBe("BLOCKED");
      expect((await one.call({ ...args, confirmed: true })).stdout).toBe("ran\n");
      await one.client.close();
      await two.client.close();
      // A declined prompt: the CLI flags, the person says no, the CLI disconnects. Nothing stays pending.
      const declined = await open();
      const risky = { command: "rm -f other.txt && echo ran", working_directory: sb.cwd };
      expect((await declined.call(risky)).needs_confirmation).toBe(true);
      await declined.client.close();
      const later = await open();
      expect((await later.call({ ...risky, confirmed: true })).error_code).toBe("BLOCKED");
      await later.client.close();
    } finally {
      await sb.close();
    }
  });
});

describe("pending confirmations are bounded", () => {
  test("they expire after 10 minutes", () => {
    let now = 1_000_000;
    const p = new PendingConfirmations(() => now);
    p.request("x");
    now += CONFIRMATION_TTL_MS - 1;
    expect(p.size).toBe(1);
    now += 1;
    expect(p.consume("x")).toBe(false);
  });

  test("at most 100 wait; the oldest goes first", () => {
    const p = new PendingConfirmations();
    for (let i = 0; i <= MAX_PENDING; i++) p.request(`cmd ${i}`);
    expect(p.size).toBe(MAX_PENDING);
    expect(p.consume("cmd 0")).toBe(false);
    expect(p.consume(`cmd ${MAX_PENDING}`)).toBe(true);
  });

  test("the binding ignores confirmed and description, and nothing else", () => {
    const a = requestBinding("bash", { command: "rm x", confirmed: false, description: "one" });
    expect(requestBinding("bash", { command: "rm x", confirmed: true, description: "two" })).toBe(a);
    expect(requestBinding("bash", { command: "rm x", host: "h" })).not.toBe(a);
  });

  test("through the server too: a request beyond the 100 waiting pushes out the oldest, so memory stays bounded", async () => {
    const t = await startServer();
    try {
      const rmOf = (i: number) => ({ command: `rm -f never-there-${i}.txt` });
      for (let i = 0; i <= MAX_PENDING; i++) expect((await t.call("bash", rmOf(i))).needs_confirmation).toBe(true);
      expect((await t.call("bash", { ...rmOf(0), confirmed: true })).error_code).toBe("BLOCKED"); // pushed out
      expect((await t.call("bash", { ...rmOf(MAX_PENDING), confirmed: true })).exit_code).toBe(0);
    } finally {
      await t.close();
    }
  });
});
