/**
 * SPEC §16: hosts of every kind. agent-shell runs on the far side of a real Podman container
 * (started here, shared by this file, removed at the end) and the near side's calls for that
 * host are forwarded to it over one reused pipe.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/cli.ts";
import { containerExists, podman, startContainer, type TestContainer } from "../helpers/container.ts";
import { BINARY, type McpSession, startServer } from "../helpers/mcp.ts";
import { processes, uniqueSleep } from "../helpers/procs.ts";

let box: TestContainer;
let dir: string;
let configFile: string;
let near: McpSession;
/** Where the first use copies agent-shell inside the container: absent there (and here) before. */
let copiedPath: string;
const missing = `as-test-missing-${process.pid}`;

beforeAll(async () => {
  box = await startContainer();
  dir = realpathSync(mkdtempSync(join(tmpdir(), "as-test-far-")));
  copiedPath = `/opt/as-test-far-${process.pid}-${Math.random().toString(36).slice(2, 8)}/agent-shell`;
  configFile = join(dir, "config.toml");
  writeFileSync(
    configFile,
    [
      `[hosts.box]`,
      `container = "${box.name}"`,
      `engine = "podman"`,
      `agent_path = "${copiedPath}"`,
      ``,
      `[hosts.piped]`,
      `exec = ["podman", "exec", "-i", "--workdir", "/tmp", "${box.name}"]`,
      `agent_path = "${copiedPath}"`,
      ``,
      `[hosts.readonly]`,
      `container = "${box.name}"`,
      `agent_path = "${copiedPath}"`,
      `sandbox = "read-only"`,
      ``,
      `[hosts.gone]`,
      `container = "${missing}"`,
      ``,
    ].join("\n"),
  );
  near = await startServer({ args: ["--config", configFile] });
}, 60_000);

afterAll(async () => {
  await near?.close();
  await box?.remove();
  rmSync(dir, { recursive: true, force: true });
  // Nothing of ours is left: no container, no pipe process.
  expect(await containerExists(box.name)).toBe(false);
  expect(processes().filter((p) => p.cmdline.includes(box.name))).toEqual([]);
}, 60_000);

/** The near server's pipe processes to host "box" (`podman exec -i NAME sh -c …`). */
function pipeProcesses(): number[] {
  return processes()
    .filter((p) => p.ppid === near.pid && p.cmdline.startsWith(`podman exec -i ${box.name} sh -c`) && !p.cmdline.includes("read-only"))
    .map((p) => p.pid);
}

describe("a container host", () => {
  test("a foreground command runs inside the container (its hostname, its filesystem), agent-shell copied there on first use", async () => {
    expect(existsSync(copiedPath)).toBe(false);
    expect((await box.exec(["test", "-e", copiedPath])).code).not.toBe(0);
    const marker = `/tmp/as-far-marker-${process.pid}`;
    expect((await box.exec(["sh", "-c", `echo inside > ${marker}`])).code).toBe(0);
    const hostname = (await box.exec(["hostname"])).stdout.trim();

    const r = await near.call("bash", { command: `hostname; cat ${marker}; echo oops >&2; exit 3`, host: "box" });
    expect(r).toMatchObject({ exit_code: 3, success: false, stdout: `${hostname}\ninside\n`, stderr: "oops\n", host: "box" });
    expect(existsSync(marker)).toBe(false); // the file exists only in the container
    // Copied over the pipe into the container, executable, the same bytes as ours.
    const sum = (await box.exec(["sha256sum", copiedPath])).stdout.split(" ")[0];
    expect(sum).toBe(new Bun.CryptoHasher("sha256").update(await Bun.file(BINARY).arrayBuffer()).digest("hex"));
    expect((await box.exec(["test", "-x", copiedPath])).code).toBe(0);
    expect(existsSync(copiedPath)).toBe(false);

    const ok = await near.call("bash", { command: "echo fine", host: "box" });
    expect(ok).toMatchObject({ exit_code: 0, success: true, stdout: "fine\n", host: "box" });
  }, 60_000);

  test("the same through an exec host (any command that gives a pipe)", async () => {
    const hostname = (await box.exec(["hostname"])).stdout.trim();
    const r = await near.call("bash", { command: "hostname; echo to-err >&2; exit 5", host: "piped" });
    expect(r).toMatchObject({ exit_code: 5, success: false, stdout: `${hostname}\n`, stderr: "to-err\n", host: "piped" });
  }, 60_000);

  test("a host not in the configuration is INVALID_ARGUMENT listing the configured ones", async () => {
    const r = await near.call("bash", { command: "true", host: `podman:${box.name}` });
    expect(r.error_code).toBe("INVALID_ARGUMENT");
    expect(r.error).toContain(`unknown host 'podman:${box.name}'`);
    expect(r.error).toContain("box, gone, piped, readonly");
    expect(r.context.known_hosts).toEqual(["box", "gone", "piped", "readonly"]);
  });

  test("the far side's sandbox applies and is reported: a write to its /etc is denied (Landlock inside the container)", async () => {
    const file = `/etc/as-far-denied-${process.pid}`;
    const r = await near.call("bash", { command: `touch ${file}`, host: "box" });
    expect(r).toMatchObject({ success: false, sandbox: "workspace-write", sandbox_level: "landlock", host: "box" });
    expect(r.stderr).toContain("Permission denied");
    expect((await box.exec(["test", "-e", file])).code).not.toBe(0);
    // A host's declared mode applies to its connection: read-only denies even the far home.
    const ro = await near.call("bash", { command: "touch ~/as-far-ro-probe", host: "readonly" });
    expect(ro).toMatchObject({ success: false, sandbox: "read-only", sandbox_level: "landlock", host: "readonly" });
  }, 30_000);

  test("background tasks there: exact output and exit code; kill_shell leaves nothing running there; a tty task gets a terminal", async () => {
    const started = await near.call("bash", { command: "printf 'one\\n'; sleep 0.3; printf 'two\\n' >&2; exit 7", host: "box", run_in_background: true });
    expect(started).toMatchObject({ status: "running", host: "box" });
    expect(started.task_id).toMatch(/^box:bg-\d+$/);
    const done = await near.call("task_output", { task_id: started.task_id, wait: true, timeout: 30 });
    expect(done).toMatchObject({ task_id: started.task_id, status: "completed", exit_code: 7, stdout: "one\n", stderr: "two\n", host: "box" });

    const sleep = uniqueSleep();
    const long = await near.call("bash", { command: `sleep ${sleep}`, host: "box", run_in_background: true });
    const listed = await near.call("task_list", { status: "running" });
    expect(listed.tasks.map((t: any) => t.task_id)).toContain(long.task_id);
    expect((await box.exec(["pgrep", "-f", `sleep ${sleep}`])).code).toBe(0);
    const killed = await near.call("kill_shell", { task_id: long.task_id });
    expect(killed).toMatchObject({ task_id: long.task_id, status: "killed", host: "box" });
    expect((await box.exec(["pgrep", "-f", `sleep ${sleep}`])).code).not.toBe(0);

    const tty = await near.call("bash", { command: "tty; [ -t 0 ] && echo on-a-terminal", host: "box", tty: true });
    expect(tty.stdout).toMatch(/^\/dev\/pts\/\d+\r?\non-a-terminal/);
    const shell = await near.call("bash", { command: "read -r line; echo \"got:$line\"", host: "box", tty: true, run_in_background: true });
    const typed = await near.call("write_stdin", { task_id: shell.task_id, chars: "hello", keys: ["enter"], yield_ms: 3000 });
    expect(typed).toMatchObject({ task_id: shell.task_id, host: "box" });
    expect(typed.output).toContain("got:hello");
  }, 60_000);

  test("SIGKILL of the pipe process while a far task runs: its output and exit code arrive after it ends; the next call reopens the pipe", async () => {
    const started = await near.call("bash", { command: "sleep 1; echo survived; exit 9", host: "box", run_in_background: true });
    const [pipe] = pipeProcesses();
    expect(pipe).toBeGreaterThan(0);
    process.kill(pipe!, "SIGKILL");
    const r = await near.call("task_output", { task_id: started.task_id, wait: true, timeout: 30 });
    expect(r).toMatchObject({ status: "completed", exit_code: 9, stdout: "survived\n", host: "box" });
    const now = pipeProcesses();
    expect(now.length).toBe(1);
    expect(now[0]).not.toBe(pipe);
  }, 60_000);
});

test("task_output reads task_ids of several hosts in one call: until all, and until any (the other wait cut short)", async () => {
  const here = await near.call("bash", { command: "sleep 0.3; echo here", run_in_background: true });
  const there = await near.call("bash", { command: "sleep 0.5; echo there; exit 2", host: "box", run_in_background: true });
  const all = await near.call("task_output", { task_ids: [there.task_id, here.task_id], wait: true, timeout: 30 });
  expect(all.results.map((r: any) => [r.task_id, r.stdout, r.exit_code])).toEqual([
    [there.task_id, "there\n", 2],
    [here.task_id, "here\n", 0],
  ]);
  expect(all.finished.sort()).toEqual([here.task_id, there.task_id].sort());

  const sleep = uniqueSleep();
  const slow = await near.call("bash", { command: `sleep ${sleep}`, host: "box", run_in_background: true });
  const quick = await near.call("bash", { command: "sleep 0.3", run_in_background: true });
  const any = await near.call("task_output", { task_ids: [slow.task_id, quick.task_id], wait: true, until: "any", timeout: 30 });
  // Answered at the quick one's end: the slow one still runs (its sleep outlasts the test).
  expect(any.finished).toEqual([quick.task_id]);
  expect(any.results.map((r: any) => r.status)).toEqual(["running", "completed"]);
  await near.call("kill_shell", { task_id: slow.task_id });
}, 60_000);

test("a near-side restart loses nothing: a new server reads the far task's output and exit code by the same id", async () => {
  const first = await startServer({ args: ["--config", configFile] });
  let id: string;
  try {
    id = (await first.call("bash", { command: "sleep 0.5; echo kept; exit 6", host: "box", run_in_background: true })).task_id;
  } finally {
    await first.close();
  }
  const second = await startServer({ args: ["--config", configFile] });
  try {
    const r = await second.call("task_output", { task_id: id, wait: true, timeout: 30 });
    expect(r).toMatchObject({ task_id: id, status: "completed", exit_code: 6, stdout: "kept\n", host: "box" });
    const listed = await second.call("task_list", { host: "box" });
    expect(listed.tasks.map((t: any) => t.task_id)).toContain(id);
  } finally {
    await second.close();
  }
}, 60_000);

describe("agent-shell hosts check", () => {
  test("shows the far side's version, sandbox level and round trip; a missing container fails naming it", async () => {
    const ok = await runCli(["hosts", "check", "box", "--config", configFile, "--json"]);
    expect(ok.code).toBe(0);
    const [report] = JSON.parse(ok.stdout).hosts;
    expect(report).toMatchObject({ name: "box", ok: true, version: (await runCli(["--version"])).stdout.trim().split(" ")[1], sandbox: "workspace-write", sandbox_level: "landlock" });
    expect(report.way).toBe(`podman container '${box.name}'`);
    expect(report.rtt_ms).toBeGreaterThan(0);

    const all = await runCli(["hosts", "check", "--config", configFile]);
    expect(all.code).toBe(1);
    expect(all.stdout).toMatch(/^box: .* ok, agent-shell \S+, sandbox workspace-write \(landlock\), round trip [\d.]+ ms$/m);
    expect(all.stdout).toMatch(new RegExp(`^gone: podman container '${missing}': FAILED: .*container '${missing}' does not exist`, "m"));
  }, 60_000);
});

test("hosts check says exactly what is wrong: container not running, engine not installed, architecture mismatch", async () => {
  const stopped = `${box.name}-stopped`;
  const created = await podman(["create", "--name", stopped, "--runtime", "runc", "--rootfs", "/:O", "sleep", "infinity"]);
  expect(created.code).toBe(0);
  // A far side (this machine, through env) whose uname names another architecture.
  const [ours, theirs] = process.arch === "arm64" ? ["aarch64", "x86_64"] : ["x86_64", "aarch64"];
  const fake = join(dir, "fake-uname");
  writeFileSync(join(dir, "uname"), `#!/bin/sh\ncase "$1" in -s) echo Linux;; -m) echo ${theirs};; esac\n`, { mode: 0o755 });
  const cfg = join(dir, "wrong.toml");
  writeFileSync(
    cfg,
    [
      `[hosts.stopped]\ncontainer = "${stopped}"\nengine = "podman"`,
      `[hosts.nodocker]\ncontainer = "whatever"\nengine = "docker"`,
      `[hosts.arm]\nexec = ["env", "PATH=${dir}:/usr/bin:/bin"]\nagent_path = "${fake}/agent-shell"`,
    ].join("\n"),
  );
  try {
    const r = await runCli(["hosts", "check", "--config", cfg], { env: { PATH: "/usr/bin:/bin" } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^stopped: podman container '${stopped}': FAILED: .*container '${stopped}' is not running`, "m"));
    expect(r.stdout).toMatch(/^nodocker: docker container 'whatever': FAILED: .*the container engine 'docker' is not installed/m);
    expect(r.stdout).toMatch(new RegExp(`^arm: exec: env .*: FAILED: .*the far side is Linux ${theirs}, this agent-shell is built for Linux ${ours}\\. Install agent-shell \\S+ for Linux ${theirs} at `, "m"));
    expect(existsSync(fake)).toBe(false); // nothing was copied
  } finally {
    await podman(["rm", "-f", stopped]);
  }
}, 60_000);

describe("copying agent-shell to the far side", () => {
  test("a partial copy never runs: the checksum fails, nothing is installed, the call says why", async () => {
    // An exec host whose pipe cuts stdin after 1 MB (the far side is this machine here).
    const target = join(dir, "cut", "agent-shell");
    const cfg = join(dir, "cut.toml");
    writeFileSync(cfg, `[hosts.cut]\nexec = ["sh", "-c", "head -c 1000000 | \\"$@\\"", "sh"]\nagent_path = "${target}"\n`);
    const session = await startServer({ args: ["--config", cfg] });
    try {
      const r = await session.call("bash", { command: "true", host: "cut" });
      expect(r.error_code).toBe("IO_ERROR");
      expect(r.error).toContain("Copying agent-shell");
      expect(r.error).toContain("checksum mismatch: received 1000000 bytes");
      expect(existsSync(target)).toBe(false);
      expect(readdirSync(join(dir, "cut"))).toEqual([]); // no partial file left either
    } finally {
      await session.close();
    }
  }, 60_000);
});
