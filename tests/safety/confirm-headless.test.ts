/**
 * SPEC §19, harnesses as they are: a headless client declares elicitation and answers every
 * question itself within milliseconds. Such an answer is not a person's: under confirm_by =
 * "auto" the model's two-step flow stands in, under "person" the call is refused, and the
 * model never reads that a person declined. The question's first line stands alone, the
 * command is shown on one line, and task_output's wait reports progress.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type ElicitResult, ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type McpSession, type StartOptions, startServer } from "../helpers/mcp.ts";

/** A client that answers each question with `answer` (after `delayMs`), keeping the questions. */
function client(answer: ElicitResult, delayMs = 0) {
  const questions: string[] = [];
  return {
    questions,
    install(c: Client) {
      c.setRequestHandler(ElicitRequestSchema, async (request) => {
        questions.push((request.params as { message: string }).message);
        if (delayMs) await Bun.sleep(delayMs); // a person reading the question
        return answer;
      });
    },
  };
}

const CANCEL: ElicitResult = { action: "cancel" };
const DECLINE: ElicitResult = { action: "decline" };
const ACCEPT: ElicitResult = { action: "accept", content: { confirm: true } };

let sessions: McpSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  sessions = [];
});

async function serve(c: ReturnType<typeof client>, opts: StartOptions = {}): Promise<McpSession> {
  const s = await startServer({ ...opts, capabilities: { elicitation: {} }, setup: (cl) => c.install(cl) });
  sessions.push(s);
  return s;
}

/** A victim folder with a file in it, made in the server's own temp folder. */
function victim(s: McpSession): string {
  const dir = join(s.cwd, "build3");
  mkdirSync(dir);
  writeFileSync(join(dir, "precious"), "x");
  return dir;
}

const RM = "rm -rf ./build3";

describe("a client that answers without its person (within 0.5 s)", () => {
  test.each([["cancel", CANCEL], ["decline", DECLINE]] as const)("%s within ms, auto: needs_confirmation, nothing ran; the same call with confirmed: true runs once", async (_, answer) => {
    const c = client(answer);
    const s = await serve(c);
    const dir = victim(s);
    const first = await s.call("bash", { command: RM });
    expect(first.needs_confirmation).toBe(true);
    expect(first.message).toContain("without asking its person");
    expect(first.message).not.toMatch(/person declined|declined/);
    expect(existsSync(join(dir, "precious"))).toBe(true);
    expect(c.questions).toHaveLength(1);
    // The retry is the confirmation: asking again would reach the same client.
    const ran = await s.call("bash", { command: RM, confirmed: true });
    expect(ran).toMatchObject({ exit_code: 0 });
    expect(existsSync(dir)).toBe(false);
    expect(c.questions).toHaveLength(1);
    // Used once: the next call asks the client again.
    victim(s);
    expect((await s.call("bash", { command: RM, confirmed: true })).needs_confirmation).toBe(true);
    expect(c.questions).toHaveLength(2);
  });

  test("the model's confirmed: true on a first call still asks, and runs nothing", async () => {
    const c = client(CANCEL);
    const s = await serve(c);
    const dir = victim(s);
    const r = await s.call("bash", { command: RM, confirmed: true });
    expect(r.needs_confirmation).toBe(true);
    expect(c.questions).toHaveLength(1);
    expect(existsSync(join(dir, "precious"))).toBe(true);
  });

  test("a looser sandbox for one call falls back the same way", async () => {
    const c = client(CANCEL);
    const s = await serve(c);
    const dir = victim(s);
    const first = await s.call("bash", { command: RM, sandbox: "off" });
    expect(first.needs_confirmation).toBe(true);
    expect(first.message).toContain("without asking its person");
    expect(existsSync(dir)).toBe(true);
    expect(await s.call("bash", { command: RM, sandbox: "off", confirmed: true })).toMatchObject({ exit_code: 0, sandbox: "off" });
    expect(existsSync(dir)).toBe(false);
    expect(c.questions).toHaveLength(1);
  });

  test('confirm_by = "person": refused, saying the client answered without its person', async () => {
    const c = client(CANCEL);
    const s = await serve(c, { env: { AGENT_SHELL_CONFIRM_BY: "person" } });
    const dir = victim(s);
    for (const args of [{ command: RM }, { command: RM, confirmed: true }]) {
      const r = await s.call("bash", args);
      expect(r.error_code).toBe("BLOCKED");
      expect(r.error).toContain("answered the confirmation question itself, without asking its person");
      expect(r.error).not.toContain("person declined");
      expect(r.needs_confirmation).toBeUndefined();
    }
    expect(existsSync(join(dir, "precious"))).toBe(true);
  });

  test("an accept within ms is taken as given", async () => {
    const c = client(ACCEPT);
    const s = await serve(c);
    const dir = victim(s);
    expect(await s.call("bash", { command: RM })).toMatchObject({ exit_code: 0 });
    expect(existsSync(dir)).toBe(false);
  });
});

test("a person who declines after a second: nothing runs, the person declined, no needs_confirmation", async () => {
  const c = client(DECLINE, 1000);
  const s = await serve(c);
  const dir = victim(s);
  const r = await s.call("bash", { command: RM });
  expect(r.error_code).toBe("BLOCKED");
  expect(r.error).toContain("the person declined");
  expect(r.needs_confirmation).toBeUndefined();
  expect(existsSync(join(dir, "precious"))).toBe(true);
});

describe("the question", () => {
  /** The one question a cancelling client was asked about `args`; nothing runs. */
  async function questionFor(args: Record<string, unknown>): Promise<{ message: string; cwd: string }> {
    const c = client(CANCEL);
    const s = await serve(c);
    const dir = victim(s);
    await s.call("bash", args);
    expect(existsSync(join(dir, "precious"))).toBe(true);
    expect(c.questions).toHaveLength(1);
    return { message: c.questions[0]!, cwd: s.cwd };
  }

  const plain = (message: string) => {
    expect(message).not.toContain("\x1b");
    expect(message).not.toContain("\r");
  };

  test.each([
    ["after a harmless first line", `echo safe\n${RM}`],
    ["after 400 blanks", `${" ".repeat(400)}; ${RM}`],
  ])("its first line names the part that deletes, %s", async (_, command) => {
    const { message, cwd } = await questionFor({ command });
    const first = message.split("\n")[0]!;
    expect(first.length).toBeLessThanOrEqual(300);
    expect(first).toBe(`Deletes files: ${RM} (in ${cwd}, on this machine)`);
    // The whole command on one line, newlines as ⏎ and blanks collapsed.
    const line = message.split("\n").find((l) => l.startsWith("Command: "))!;
    expect(line).toBe(command.startsWith("echo") ? `Command: echo safe ⏎ ${RM}` : `Command: ; ${RM}`);
    plain(message);
  });

  test("control characters are shown escaped, never sent raw", async () => {
    const { message } = await questionFor({ command: `echo "\x1b[2J\x1b]0;hi\x07"\r; ${RM}` });
    plain(message);
    expect(message).toContain(String.raw`Command: echo "\x1b[2J\x1b]0;hi\x07"\r; ` + RM);
  });

  test("a long command is cut in the middle, never at the end", async () => {
    const { message } = await questionFor({ command: `${RM} ${"a".repeat(5000)} && echo the-end` });
    const first = message.split("\n")[0]!;
    expect(first.length).toBeLessThanOrEqual(300);
    expect(first).toStartWith("Deletes files: rm -rf ./build3 aaa");
    const line = message.split("\n").find((l) => l.startsWith("Command: "))!;
    expect(line).toContain("characters cut");
    expect(line).toStartWith(`Command: ${RM} aaa`);
    expect(line).toEndWith("aaa && echo the-end");
    expect(line.length).toBeLessThan(2100);
  });

  test("the looser-sandbox question leads with what would run and where", async () => {
    const { message, cwd } = await questionFor({ command: "echo one\necho  two", sandbox: "off" });
    const first = message.split("\n")[0]!;
    expect(first).toStartWith("Runs with no sandbox at all");
    expect(first).toEndWith(`: echo one ⏎ echo two (in ${cwd}, on this machine)`);
    plain(message);
  });
});

test("task_output with wait reports progress at least once a second to a client that gave a progressToken", async () => {
  const s = await startServer();
  sessions.push(s);
  const started = await s.call("bash", { command: "echo waiting; sleep 3.5", run_in_background: true });
  const seen: Array<{ progress: number; message?: string }> = [];
  s.client.setNotificationHandler(ProgressNotificationSchema, (n) => {
    seen.push({ progress: n.params.progress, message: n.params.message });
  });
  const raw: any = await s.client.callTool({ name: "task_output", arguments: { task_id: started.task_id, wait: true, timeout_seconds: 30 } }, undefined, {
    onprogress: () => {},
  });
  expect(raw.structuredContent).toMatchObject({ status: "completed", exit_code: 0 });
  // A notice a second over a wait of 3.5 s or more (a busy machine makes the wait longer, not the count smaller).
  expect(seen.length).toBeGreaterThanOrEqual(3);
  for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
  expect(seen.every((p) => p.message === "waiting")).toBe(true);
});
