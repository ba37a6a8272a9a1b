/**
 * SPEC §19: a person confirms. With a client that declared `elicitation`, a call needing
 * confirmation is put to the client's person (`elicitation/create`) before anything runs;
 * the model's `confirmed: true` never stands in for them. Driven with the official SDK client,
 * whose ElicitRequestSchema handler plays the person.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliSandbox } from "../helpers/cli.ts";
import { type Sshd, startSshd } from "../helpers/sshd.ts";
import { BINARY, type McpSession, type StartOptions, startServer } from "../helpers/mcp.ts";

/** The person: answers each question with the next scripted answer and remembers what was asked. */
class Person {
  questions: Array<{ message: string; requestedSchema: unknown }> = [];
  /** Resolves at the next question. */
  asked = Promise.withResolvers<void>();
  constructor(private answer: (n: number, message: string) => ElicitResult | Promise<ElicitResult> | "never") {}

  install(client: Client): void {
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
      const params = request.params as { message: string; requestedSchema?: unknown };
      this.questions.push({ message: params.message, requestedSchema: params.requestedSchema });
      this.asked.resolve();
      this.asked = Promise.withResolvers<void>();
      const answer = this.answer(this.questions.length, params.message);
      if (answer !== "never") return answer;
      // Never answers (until the session closes).
      return new Promise<ElicitResult>((_, reject) => extra.signal.addEventListener("abort", () => reject(new Error("withdrawn"))));
    });
  }
}

const accept: ElicitResult = { action: "accept", content: { confirm: true } };
/** A person reads the question before saying no (an answer within 0.5 s is the client's own: confirm-headless.test.ts). */
const later = (answer: ElicitResult): Promise<ElicitResult> => Bun.sleep(1000).then(() => answer);
const decline = (): Promise<ElicitResult> => later({ action: "decline" });

let sessions: McpSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  sessions = [];
});

/** A server whose client can elicit, with `person` answering. */
async function withPerson(person: Person, opts: StartOptions = {}): Promise<McpSession> {
  const s = await startServer({ ...opts, capabilities: { elicitation: {} }, setup: (c) => person.install(c) });
  sessions.push(s);
  return s;
}

/** A server whose client cannot elicit. */
async function withoutPerson(opts: StartOptions = {}): Promise<McpSession> {
  const s = await startServer(opts);
  sessions.push(s);
  return s;
}

/** A victim file in the session's own folder. */
function victim(s: McpSession): string {
  const path = join(s.cwd, "victim");
  writeFileSync(path, "precious\n");
  return path;
}

describe("with a client that can elicit, the person is asked", () => {
  test("a caution command is put to the person (command, folder, host, what it does in words); accepted, it runs once", async () => {
    const person = new Person(() => accept);
    const s = await withPerson(person);
    const file = victim(s);
    const r = await s.call("bash", { command: "echo ran >> count; rm victim" });
    expect(r).toMatchObject({ exit_code: 0, success: true });
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(join(s.cwd, "count"), "utf8")).toBe("ran\n");
    expect(person.questions).toHaveLength(1);
    const { message, requestedSchema } = person.questions[0]!;
    expect(message).toContain("echo ran >> count; rm victim");
    expect(message).toContain(`Folder: ${s.cwd}`);
    expect(message).toContain("Host: this machine");
    // The first line alone says what would happen, to what, where.
    expect(message.split("\n")[0]).toBe(`Deletes files: rm victim (in ${s.cwd}, on this machine)`);
    expect(message).not.toContain("^rm"); // words, never a pattern
    // One step: a flat object with one required yes/no.
    expect(requestedSchema).toEqual({ type: "object", properties: { confirm: expect.objectContaining({ type: "boolean" }) }, required: ["confirm"] });
  });

  test("declined: nothing runs, and the result says the person declined", async () => {
    const person = new Person(() => decline());
    const s = await withPerson(person);
    const file = victim(s);
    const r = await s.call("bash", { command: "rm victim" });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("the person declined");
    expect(readFileSync(file, "utf8")).toBe("precious\n");
    expect(person.questions).toHaveLength(1);
  });

  test("cancelled by the person: nothing runs, and the result says so", async () => {
    const person = new Person(() => later({ action: "cancel" }));
    const s = await withPerson(person);
    const file = victim(s);
    const r = await s.call("bash", { command: "rm victim" });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("cancelled");
    expect(existsSync(file)).toBe(true);
  });

  test("the model's confirmed: true alone runs nothing: the person is still asked", async () => {
    const person = new Person(() => decline());
    const s = await withPerson(person);
    const file = victim(s);
    const r = await s.call("bash", { command: "rm victim", confirmed: true });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("declined");
    expect(person.questions).toHaveLength(1);
    expect(existsSync(file)).toBe(true);
    // Nor does the model's two-step flow open a way around the person.
    expect(r.needs_confirmation).toBeUndefined();
  });

  test("an unanswered question times out (confirm_timeout_seconds) and runs nothing", async () => {
    const person = new Person(() => "never");
    const s = await withPerson(person, { env: { AGENT_SHELL_CONFIRM_TIMEOUT_SECONDS: "1" } });
    // The server withdraws the question it gave up on. (Seen on the wire: the SDK client
    // ignores a cancellation of request id 0, which this first question has.)
    const withdrawn: unknown[] = [];
    const deliver = s.transport.onmessage!;
    s.transport.onmessage = (message) => {
      if ("method" in message && message.method === "notifications/cancelled") withdrawn.push(message.params?.requestId);
      deliver(message);
    };
    const file = victim(s);
    const started = Date.now();
    const r = await s.call("bash", { command: "rm victim" });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("did not answer");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(existsSync(file)).toBe(true);
    expect(withdrawn).toEqual([0]);
  });

  test("a call the client cancels while the person is asked runs nothing (a client's own tool timeout)", async () => {
    const person = new Person(() => "never");
    const s = await withPerson(person);
    const file = victim(s);
    const abort = new AbortController();
    const asked = person.asked.promise;
    const call = s.call("bash", { command: "rm victim" }, { signal: abort.signal });
    await asked;
    abort.abort();
    await expect(call).rejects.toThrow();
    // The server is still there and ran nothing.
    expect((await s.call("bash", { command: "echo alive" })).stdout).toBe("alive\n");
    expect(existsSync(file)).toBe(true);
    expect(person.questions).toHaveLength(1);
  });

  test("a malformed answer (confirm: \"yes\") is not an acceptance, with a clear message", async () => {
    const person = new Person(() => ({ action: "accept", content: { confirm: "yes" } }));
    const s = await withPerson(person);
    const file = victim(s);
    const r = await s.call("bash", { command: "rm victim" });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("did not fit the question");
    expect(r.error).toContain("'confirm' must be true or false");
    expect(existsSync(file)).toBe(true);
  });

  test("an accepted form without confirm: true is no", async () => {
    const person = new Person(() => ({ action: "accept", content: { confirm: false } }));
    const s = await withPerson(person);
    const file = victim(s);
    const r = await s.call("bash", { command: "rm victim" });
    expect(r.error_code).toBe("BLOCKED");
    expect(existsSync(file)).toBe(true);
  });

  test("a looser per-call sandbox is asked about (with what the command does), once", async () => {
    const person = new Person((n) => (n === 1 ? decline() : accept));
    const s = await withPerson(person);
    const file = victim(s);
    const declined = await s.call("bash", { command: "rm victim", sandbox: "off" });
    expect(declined.error_code).toBe("BLOCKED");
    expect(existsSync(file)).toBe(true);
    expect(person.questions[0]!.message.split("\n")[0]).toStartWith("Deletes files: rm victim; it also runs with no sandbox at all");
    const ran = await s.call("bash", { command: "rm victim", sandbox: "off" });
    expect(ran).toMatchObject({ exit_code: 0, sandbox: "off" });
    expect(existsSync(file)).toBe(false);
    expect(person.questions).toHaveLength(2); // one question per call, covering both
    // A harmless command in a looser sandbox is asked about too.
    await s.call("bash", { command: "true", sandbox: "off" });
    expect(person.questions).toHaveLength(3);
    expect(person.questions[2]!.message).not.toContain("deletes");
  });

  test("a declined background command creates no task; a declined task-augmented call creates no MCP task", async () => {
    const person = new Person(() => decline());
    const s = await withPerson(person);
    const file = victim(s);
    const r = await s.call("bash", { command: "rm victim", run_in_background: true });
    expect(r.error_code).toBe("BLOCKED");
    await expect(s.client.request({ method: "tools/call", params: { name: "bash", arguments: { command: "rm victim" }, task: {} } }, CreateTaskResultSchema)).rejects.toThrow(
      /declined/,
    );
    expect(person.questions).toHaveLength(2);
    expect((await s.call("task_list", {})).tasks).toEqual([]);
    expect((await s.client.experimental.tasks.listTasks()).tasks).toEqual([]);
    expect(existsSync(file)).toBe(true);
  });

  test("an accepted task-augmented call is asked before it starts, then runs as a task", async () => {
    const person = new Person(() => accept);
    const s = await withPerson(person);
    const file = victim(s);
    const created = await s.client.request({ method: "tools/call", params: { name: "bash", arguments: { command: "rm victim" }, task: {} } }, CreateTaskResultSchema);
    expect(person.questions).toHaveLength(1);
    const raw: any = await s.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(raw.structuredContent).toMatchObject({ exit_code: 0 });
    expect(existsSync(file)).toBe(false);
  });

  test("a subagent asking for a looser sandbox is put to the person with its prompt; declined, no subagent starts", async () => {
    const person = new Person((n) => (n === 1 ? decline() : accept));
    const s = await withPerson(person, { args: ["--agent-command", JSON.stringify(["sh", "-c", 'echo agent: "$0"', "{prompt}"])] });
    const declined = await s.call("task", { prompt: "tidy up", sandbox: "off", background: true });
    expect(declined.error_code).toBe("BLOCKED");
    expect(person.questions[0]!.message).toContain("Prompt: tidy up");
    expect(person.questions[0]!.message).toContain("no sandbox");
    expect((await s.call("task_list", {})).tasks).toEqual([]);
    const ran = await s.call("task", { prompt: "tidy up", sandbox: "off" });
    expect(ran).toMatchObject({ status: "completed", stdout: "agent: tidy up\n", sandbox: "off" });
  });

  test("two calls ask twice: an answer is never reused", async () => {
    const person = new Person(() => accept);
    const s = await withPerson(person);
    writeFileSync(join(s.cwd, "a"), "");
    writeFileSync(join(s.cwd, "b"), "");
    expect((await s.call("bash", { command: "rm a b" })).exit_code).toBe(0);
    writeFileSync(join(s.cwd, "a"), "");
    writeFileSync(join(s.cwd, "b"), "");
    expect((await s.call("bash", { command: "rm a b" })).exit_code).toBe(0);
    expect(person.questions).toHaveLength(2);
  });

  test("concurrent calls: each answer goes to its own call", async () => {
    const person = new Person((_, message) => (message.includes("rm a") ? accept : decline()));
    const s = await withPerson(person);
    writeFileSync(join(s.cwd, "a"), "");
    writeFileSync(join(s.cwd, "b"), "");
    const [a, b] = await Promise.all([s.call("bash", { command: "rm a" }), s.call("bash", { command: "rm b" })]);
    expect(a.exit_code).toBe(0);
    expect(b.error_code).toBe("BLOCKED");
    expect(existsSync(join(s.cwd, "a"))).toBe(false);
    expect(existsSync(join(s.cwd, "b"))).toBe(true);
  });

  test("a command needing no confirmation runs without a question", async () => {
    const person = new Person(() => decline());
    const s = await withPerson(person);
    expect((await s.call("bash", { command: "echo fine" })).stdout).toBe("fine\n");
    expect(person.questions).toHaveLength(0);
  });

  test("a blocked command is refused without asking the person", async () => {
    const person = new Person(() => accept);
    const s = await withPerson(person);
    const r = await s.call("bash", { command: "rm -rf /", sandbox: "off" });
    expect(r.error_code).toBe("BLOCKED");
    expect(person.questions).toHaveLength(0);
  });

  test("confirm_by = \"model\" keeps the two-step flow even for a client that can elicit", async () => {
    const person = new Person(() => decline());
    const s = await withPerson(person, { env: { AGENT_SHELL_CONFIRM_BY: "model" } });
    const file = victim(s);
    expect((await s.call("bash", { command: "rm victim" })).needs_confirmation).toBe(true);
    expect((await s.call("bash", { command: "rm victim", confirmed: true })).exit_code).toBe(0);
    expect(person.questions).toHaveLength(0);
    expect(existsSync(file)).toBe(false);
  });
});

describe("with a client that cannot elicit", () => {
  test("today's flow: needs_confirmation, then confirmed: true runs it once", async () => {
    const s = await withoutPerson();
    const file = victim(s);
    const first = await s.call("bash", { command: "rm victim" });
    expect(first.needs_confirmation).toBe(true);
    expect(existsSync(file)).toBe(true);
    expect((await s.call("bash", { command: "rm victim", confirmed: true })).exit_code).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  test("confirm_by = \"person\" refuses, saying why and what to do", async () => {
    const s = await withoutPerson({ env: { AGENT_SHELL_CONFIRM_BY: "person" } });
    const file = victim(s);
    for (const args of [{ command: "rm victim" }, { command: "rm victim", confirmed: true }, { command: "true", sandbox: "off" }]) {
      const r = await s.call("bash", args);
      expect(r.error_code).toBe("BLOCKED");
      expect(r.error).toContain('confirm_by = "person"');
      expect(r.error).toContain("cannot ask its person");
      expect(r.error).toContain("elicitation");
    }
    expect(existsSync(file)).toBe(true);
    // What needs no confirmation still runs.
    expect((await s.call("bash", { command: "echo fine" })).stdout).toBe("fine\n");
  });
});

describe("mcp --shared relays the question to the connection that made the call", () => {
  let base: string;
  let state: string;
  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), "as-person-shared-")));
    state = join(base, "state");
    mkdirSync(state, { mode: 0o700 });
  });
  afterAll(() => {
    Bun.spawnSync([BINARY, "daemon", "stop"], { env: { ...process.env, AGENT_SHELL_STATE_DIR: state }, stdout: "ignore", stderr: "ignore" });
    rmSync(base, { recursive: true, force: true });
  });

  test("the asking connection's person answers; another connection is not asked", async () => {
    const dir = join(base, "work");
    mkdirSync(dir);
    const asker = new Person(() => accept);
    const bystander = new Person(() => accept);
    const shared = (person: Person) => withPerson(person, { cwd: dir, stateDir: state, args: ["--shared", "--cwd", dir] });
    const one = await shared(asker);
    const two = await shared(bystander);
    writeFileSync(join(dir, "victim"), "");
    const r = await one.call("bash", { command: "rm victim" });
    expect(r).toMatchObject({ exit_code: 0 });
    expect(existsSync(join(dir, "victim"))).toBe(false);
    expect(asker.questions).toHaveLength(1);
    expect(asker.questions[0]!.message).toContain(`Folder: ${dir}`);
    expect(bystander.questions).toHaveLength(0);
    // The other connection declines its own question: nothing runs there.
    const declining = new Person(() => decline());
    const three = await shared(declining);
    writeFileSync(join(dir, "victim"), "");
    expect((await three.call("bash", { command: "rm victim" })).error).toContain("declined");
    expect(existsSync(join(dir, "victim"))).toBe(true);
  });
  test("each connection's own confirm_by and confirm_timeout_seconds apply to it", async () => {
    const dir = join(base, "own-config");
    mkdirSync(dir);
    const args = ["--shared", "--cwd", dir];
    // The daemon runs with the default (auto): the first connection started it.
    const plain = await withoutPerson({ cwd: dir, stateDir: state, args });
    const strict = await withoutPerson({ cwd: dir, stateDir: state, args, env: { AGENT_SHELL_CONFIRM_BY: "person" } });
    const silent = new Person(() => "never");
    const impatient = await withPerson(silent, { cwd: dir, stateDir: state, args, env: { AGENT_SHELL_CONFIRM_TIMEOUT_SECONDS: "1" } });
    writeFileSync(join(dir, "victim"), "");
    expect((await plain.call("bash", { command: "rm victim" })).needs_confirmation).toBe(true);
    expect((await strict.call("bash", { command: "rm victim" })).error).toContain('confirm_by = "person"');
    // Its 1 s, not the daemon's 120 s (which would outlast the test).
    expect((await impatient.call("bash", { command: "rm victim" })).error).toContain("did not answer");
    expect(existsSync(join(dir, "victim"))).toBe(true);
  });
});

describe("the CLI answers the daemon's question itself", () => {
  test.each(["person", "auto", "model"])("confirm_by = %p: refused without a TTY unless --yes; --yes runs it", async (confirmBy) => {
    const sb = cliSandbox({ AGENT_SHELL_CONFIRM_BY: confirmBy });
    try {
      const file = join(sb.cwd, "victim");
      writeFileSync(file, "x");
      const refused = await sb.run(["start", "--", "rm victim"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("--yes");
      expect(existsSync(file)).toBe(true);
      const started = await sb.run(["start", "--yes", "--", "rm victim"]);
      expect(started.code).toBe(0);
      expect((await sb.run(["wait", started.stdout.trim()])).code).toBe(0);
      expect(existsSync(file)).toBe(false);
    } finally {
      await sb.close();
    }
  });
});

describe("a command on an SSH host", () => {
  let sshd: Sshd;
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  test("the question names the host and the remote folder; declined, nothing runs there", async () => {
    const config = join(sshd.dir, "person.toml");
    writeFileSync(config, sshd.hostToml("box"));
    const person = new Person(() => decline());
    const s = await withPerson(person, { args: ["--config", config] });
    const file = join(sshd.home, "victim");
    writeFileSync(file, "precious\n");
    const r = await s.call("bash", { command: "rm victim", host: "box" });
    expect(r.error_code).toBe("BLOCKED");
    expect(r.error).toContain("declined");
    expect(person.questions).toHaveLength(1);
    expect(person.questions[0]!.message).toContain("Host: box (over SSH)");
    expect(person.questions[0]!.message).toContain("Folder: ~");
    expect(readFileSync(file, "utf8")).toBe("precious\n");
  });
});
