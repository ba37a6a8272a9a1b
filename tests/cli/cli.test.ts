import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliSandbox, readLines, runCli } from "../helpers/cli.ts";
import { processesMatching, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

// These tests wait on real processes and a real daemon; a loaded 2-core machine needs room.
setDefaultTimeout(30_000);

const sb = cliSandbox();
afterAll(() => sb.close());

describe("run: foreground, in-process, streamed live", () => {
  test("exits with the command's exit code, stdout to stdout and stderr to stderr", async () => {
    const r = await sb.run(["run", "--", "sh", "-c", "echo out; echo err >&2; exit 7"]);
    expect(r.code).toBe(7);
    expect(r.stdout).toBe("out\n");
    expect(r.stderr).toBe("err\n");
  });

  test("one word after -- is a shell command line", async () => {
    const r = await sb.run(["run", "--", "printf 'a\\nb\\n' | wc -l"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("2");
  });

  test("--timeout: exit 124 (long before its sleep ends) and nothing left running", async () => {
    const marker = uniqueSleep();
    const r = await sb.run(["run", "--timeout", "1", "--", `sleep ${marker} & sleep ${marker}`]);
    expect(r.code).toBe(124);
    expect(r.stderr).toContain("timed out");
    expect(await waitNoProcess(marker)).toEqual([]);
  });

  test("a command ended by signal N exits 128+N", async () => {
    const r = await sb.run(["run", "--yes", "--", "kill -TERM $$"]);
    expect(r.code).toBe(143);
  });

  test("SIGINT kills the command's whole process group and exits 130", async () => {
    const marker = uniqueSleep();
    const proc = sb.spawn(["run", "--", `sleep ${marker} & sleep ${marker}; echo never`]);
    const deadline = Date.now() + 10_000;
    const sleeps = () => processesMatching(`sleep ${marker}`).filter((p) => p.cmdline === `sleep ${marker}`);
    while (sleeps().length < 2 && Date.now() < deadline) await Bun.sleep(20);
    expect(sleeps().length).toBe(2);
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(130);
    expect(await new Response(proc.stdout).text()).toBe("");
    expect(await waitNoProcess(marker)).toEqual([]);
  });

  test("output reaches the terminal while the command still runs", async () => {
    const proc = sb.spawn(["run", "--", "echo first; sleep 2; echo second"]);
    const t0 = Date.now();
    const seen: Array<[string, number]> = [];
    await readLines(proc.stdout, (line, at) => seen.push([line, at - t0]));
    expect(await proc.exited).toBe(0);
    const exitedAt = Date.now() - t0;
    expect(seen.map((s) => s[0])).toEqual(["first", "second"]);
    // "first" was on our side while the command still had 2 s of sleep ahead of it.
    expect(exitedAt - seen[0]![1]).toBeGreaterThan(1500);
  });

  test("--env and --cwd apply to the command", async () => {
    const r = await sb.run(["run", "--env", "GREETING=hi there", "--cwd", sb.stateDir, "--", 'echo "$GREETING in $PWD"']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`hi there in ${sb.stateDir}\n`);
  });

  test("--tty runs the command on a pseudo-terminal and still exits with its code", async () => {
    const r = await sb.run(["run", "--tty", "--", "test -t 1 && echo on-a-tty; exit 3"]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain("on-a-tty");
  });

  test("a caution command without a TTY is refused unless --yes", async () => {
    const file = join(sb.cwd, "precious.txt");
    writeFileSync(file, "x");
    const refused = await sb.run(["run", "--", `rm ${file}`]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("--yes");
    expect(existsSync(file)).toBe(true);
    const allowed = await sb.run(["run", "--yes", "--", `rm ${file}`]);
    expect(allowed.code).toBe(0);
    expect(existsSync(file)).toBe(false);
  });
});

describe("usage", () => {
  test.each(["run", "start", "ps", "logs", "wait", "kill", "daemon", "call"])("%s --help shows options and examples, exit 0", async (verb) => {
    const r = await sb.run([verb, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`agent-shell ${verb}`);
    expect(r.stdout).toContain("Examples:");
  });

  test.each([
    [["run"], "no command"],
    [["run", "--timeout", "soon", "--", "true"], "--timeout"],
    [["run", "--bogus", "--", "true"], "--bogus"],
    [["wait"], "task id"],
    [["kill"], "--all"],
    [["logs"], "task id"],
    [["start", "--restart", "--", "true"], "--name"],
    [["daemon", "reboot"], "reboot"],
    [["nonsense"], "nonsense"],
  ])("%j is a usage error: exit 2 with a message naming the problem", async (args, needle) => {
    const r = await sb.run(args as string[]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(needle as string);
  });
});

describe("call routes background work through the daemon", () => {
  test("a background bash in one call is read by task_output in another", async () => {
    const started = await sb.run(["call", "bash", JSON.stringify({ command: "sleep 1; echo done", run_in_background: true })]);
    expect(started.code).toBe(0);
    const id = JSON.parse(started.stdout).task_id as string;
    expect(id).toMatch(/^bg-\d+$/);
    const waited = await sb.run(["call", "task_output", JSON.stringify({ task_id: id, wait: true })]);
    expect(waited.code).toBe(0);
    const out = JSON.parse(waited.stdout);
    expect(out.status).toBe("completed");
    expect(out.exit_code).toBe(0);
    expect(out.stdout).toBe("done\n");
  });

  test("the task runs in the caller's directory, and the caller's sandbox applies", async () => {
    const started = await sb.run(["call", "bash", JSON.stringify({ command: "pwd", run_in_background: true })]);
    const id = JSON.parse(started.stdout).task_id;
    const out = JSON.parse((await sb.run(["call", "task_output", JSON.stringify({ task_id: id, wait: true })])).stdout);
    expect(out.stdout).toBe(`${sb.cwd}\n`);
    const denied = await sb.run(["call", "bash", JSON.stringify({ command: "pwd", run_in_background: true, working_directory: "/" })]);
    expect(denied.code).toBe(1);
    expect(JSON.parse(denied.stdout).error_code).toBe("ACCESS_DENIED");
  });

  test("a background subagent is refused from the command line (it would run in the daemon's /)", async () => {
    const r = await sb.run(["call", "task", JSON.stringify({ prompt: "hi", background: true })]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.error_code).toBe("INVALID_ARGUMENT");
    expect(out.error).toContain("background");
  });

  test("foreground calls run in-process and unknown tasks give NOT_FOUND", async () => {
    const fg = await sb.run(["call", "bash", JSON.stringify({ command: "echo $((6*7))" })]);
    expect(JSON.parse(fg.stdout).stdout).toBe("42\n");
    const missing = await sb.run(["call", "kill_shell", JSON.stringify({ task_id: "bg-9999" })]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).error_code).toBe("NOT_FOUND");
  });
});

describe("state dir", () => {
  test("the CLI finds the daemon where the config file's state_dir says, like every face", async () => {
    const xdg = join(sb.cwd, "xdg");
    mkdirSync(join(xdg, "agent-shell"), { recursive: true });
    const stateDir = join(sb.cwd, "configured-state");
    writeFileSync(join(xdg, "agent-shell", "config.toml"), `state_dir = "${stateDir}"\n`);
    const r = await runCli(["daemon", "status", "--json"], { env: { XDG_CONFIG_HOME: xdg } });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ running: false, state_dir: stateDir });
  });
});
