import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CliSandbox, cliSandbox, runCli } from "../helpers/cli.ts";
import { processes } from "../helpers/procs.ts";

/** A port nobody else in this run uses (tests of other files pick from other ranges or 0). */
// Below Linux's ephemeral range (32768+), so no outgoing connection of another test holds it.
let nextPort = 15000 + Math.floor(Math.random() * 15000);
const port = () => nextPort++;

/** A real HTTP server (node), answering `body`, tagged with `tag` so leftovers can be found. */
const httpServer = (p: number, body: string, tag: string) =>
  `node -e 'require("http").createServer((q,r)=>r.end("${body}")).listen(${p})' ${tag}`;
/** A real TCP server standing in for a database. */
const tcpServer = (p: number, tag: string) => `node -e 'require("net").createServer(s=>s.end("db")).listen(${p})' ${tag}`;

const alive = (tag: string) => processes().filter((p) => p.cmdline.includes(tag));

let sb: CliSandbox;
beforeAll(() => {
  sb = cliSandbox();
});
afterAll(async () => {
  await sb.close();
});

describe("names work wherever an id does", () => {
  test("logs, wait, kill and task_output take a service name (its newest task)", async () => {
    const started = await sb.run(["start", "--name", "greeter", "--", "echo hello-from-greeter; sleep 30"]);
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    const out = await sb.run(["call", "task_output", JSON.stringify({ task_id: "greeter" })]);
    expect(JSON.parse(out.stdout).task_id).toBe(id);
    const killed = await sb.run(["kill", "greeter"]);
    expect(killed.code).toBe(0);
    expect(killed.stdout).toContain(`${id} killed`);
    const logs = await sb.run(["logs", "greeter"]);
    expect(logs.stdout).toContain("hello-from-greeter");
    const waited = await sb.run(["wait", "greeter"]);
    expect(waited.code).toBe(128 + 15);
  });

  test("an unknown name says so in CLI terms, with no error-code tag", async () => {
    const r = await sb.run(["kill", "no-such-service"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no task or service named 'no-such-service'");
    expect(r.stderr).toContain("agent-shell ps");
    expect(r.stderr).not.toContain("task_list");
    expect(r.stderr).not.toMatch(/\[[A-Z_]+\]/);
  });
});

describe("restart", () => {
  test("restart NAME restarts in place: same id, new pid, ready again, ps counts it", async () => {
    const p = port();
    const tag = `restart-marker-${p}`;
    const id = (await sb.run(["start", "--name", "web", "--ready-port", String(p), "--", httpServer(p, "v1", tag)])).stdout.trim();
    const before = JSON.parse((await sb.run(["ps", "--json"])).stdout).tasks.find((t: { task_id: string }) => t.task_id === id);
    const r = await sb.run(["restart", "web"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${id} restarted`);
    expect(await (await fetch(`http://127.0.0.1:${p}/`)).text()).toBe("v1"); // ready when restart returned
    const after = JSON.parse((await sb.run(["ps", "--json"])).stdout).tasks.find((t: { task_id: string }) => t.task_id === id);
    expect(after.status).toBe("running");
    expect(after.restarts).toBe(1);
    expect(after.pid).not.toBe(before.pid);
    await sb.run(["kill", "web"]);
    expect(alive(tag)).toEqual([]);
  });

  test("--restart-on failure starts a crashing task again, backing off; a kill stops it for good", async () => {
    const id = (await sb.run(["start", "--name", "crasher", "--restart-on", "failure", "--restart-delay", "0.1", "--", "echo run; exit 3"])).stdout.trim();
    let restarts = 0;
    for (let i = 0; i < 50 && restarts < 2; i++) {
      // Each `ps` is a real request; the policy's timers advance meanwhile (0.1 s, 0.2 s, …).
      const t = JSON.parse((await sb.run(["ps", "--all", "--json"])).stdout).tasks.find((x: { task_id: string }) => x.task_id === id);
      restarts = t.restarts;
    }
    expect(restarts).toBeGreaterThanOrEqual(2);
    const logs = await sb.run(["logs", id]);
    expect(logs.stdout.split("run").length - 1).toBeGreaterThanOrEqual(3); // every run appends to the same log
    await sb.run(["kill", id]);
    const settled = JSON.parse((await sb.run(["ps", "--all", "--json"])).stdout).tasks.find((x: { task_id: string }) => x.task_id === id);
    await Bun.sleep(1000); // longer than any pending delay could be at this point (≤ 0.8 s)
    const later = JSON.parse((await sb.run(["ps", "--all", "--json"])).stdout).tasks.find((x: { task_id: string }) => x.task_id === id);
    expect(later.restarts).toBe(settled.restarts);
    expect(later.restart_pending).toBeUndefined();
    expect(later.status).not.toBe("running");
  });

  test("--restart-on always with --max-restarts stops after N restarts", async () => {
    const id = (await sb.run(["start", "--restart-on", "always", "--max-restarts", "2", "--restart-delay", "0", "--", "true"])).stdout.trim();
    let t: { restarts: number; status: string; restart_pending?: boolean } = { restarts: 0, status: "running" };
    for (let i = 0; i < 100 && !(t.restarts === 2 && t.status !== "running" && !t.restart_pending); i++) {
      t = JSON.parse((await sb.run(["ps", "--all", "--json"])).stdout).tasks.find((x: { task_id: string }) => x.task_id === id);
    }
    expect(t.restarts).toBe(2);
    expect(t.status).toBe("completed");
  });
});

describe("ps", () => {
  test("shows running tasks with CPU, memory of the group, uptime and restarts, and recent failures as failed", async () => {
    const ok = (await sb.run(["start", "--", "exit 0"])).stdout.trim();
    const bad = (await sb.run(["start", "--", "exit 5"])).stdout.trim();
    const busy = (await sb.run(["start", "--", "sleep 30 & sleep 30 & wait"])).stdout.trim();
    await sb.run(["wait", ok]);
    await sb.run(["wait", bad]);
    const table = await sb.run(["ps"]);
    const header = table.stdout.split("\n")[0]!;
    for (const col of ["ID", "NAME", "STATUS", "PID", "CPU", "MEM", "UPTIME", "RESTARTS", "EXIT", "COMMAND"]) expect(header).toContain(col);
    const row = (id: string) => table.stdout.split("\n").find((l) => l.startsWith(`${id} `));
    expect(row(bad)).toContain("failed");
    expect(row(ok)).toBeUndefined(); // a success is not shown by default
    expect(row(busy)).toMatch(/running\s+\d+\s+\d+\.\d%\s+[\d.]+[KMG]/);
    const listed = JSON.parse((await sb.run(["ps", "--json"])).stdout).tasks as Array<Record<string, any>>;
    expect(listed.find((t) => t.task_id === bad)).toMatchObject({ status: "failed", exit_code: 5 }); // SPEC §13, in --json too
    const json = listed.find((t) => t.task_id === busy)!;
    expect(json.memory_bytes).toBeGreaterThan(1024 * 1024); // bash + two sleeps
    expect(typeof json.cpu_percent).toBe("number");
    expect(json.uptime_ms).toBeGreaterThanOrEqual(0);
    const all = await sb.run(["ps", "--all"]);
    expect(all.stdout).toContain(`${ok} `);
    const allJson = JSON.parse((await sb.run(["ps", "--all", "--json"])).stdout).tasks as Array<{ task_id: string; status: string }>;
    expect(allJson.find((t) => t.task_id === ok)?.status).toBe("completed");
    await sb.run(["kill", busy]);
  });
});

test("wait on a failed task prints its exit status and the last 20 lines on stderr (no TTY)", async () => {
  const id = (await sb.run(["start", "--", "for i in $(seq 1 30); do echo line$i; done; echo broke >&2; exit 4"])).stdout.trim();
  const r = await sb.run(["wait", id]);
  expect(r.code).toBe(4);
  expect(r.stderr).toContain(`${id} failed (exit code 4)`);
  expect(r.stderr).toContain("line30");
  expect(r.stderr).toContain("line11");
  expect(r.stderr).not.toContain("line10\n");
  expect(r.stderr).toContain("broke");
});

test("--ready-url: start returns once a GET answers 2xx", async () => {
  const p = port();
  const tag = `ready-url-${p}`;
  const cmd = `sleep 0.3; node -e 'require("http").createServer((q,r)=>{r.statusCode=q.url==="/health"?200:500;r.end("ok")}).listen(${p})' ${tag}`;
  const r = await sb.run(["start", "--json", "--ready-url", `http://127.0.0.1:${p}/health`, "--", cmd]);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout).ready).toBe(true);
  expect((await fetch(`http://127.0.0.1:${p}/health`)).status).toBe(200);
  await sb.run(["kill", JSON.parse(r.stdout).task_id]);
});

describe("services file", () => {
  test("CI: up starts a database stand-in and the web server that needs it, the test fetches it, down leaves nothing", async () => {
    const db = port();
    const web = port();
    const tag = `ci-services-${web}`;
    const dir = sb.cwd;
    writeFileSync(
      join(dir, "agent-shell.toml"),
      `[services.web]
command = '''node -e 'require("net").connect(${db}, "127.0.0.1").on("data", d => require("http").createServer((q,r)=>r.end("web+" + d)).listen(${web}))' ${tag}'''
depends_on = ["db"]
ready_url = "http://127.0.0.1:${web}/"

[services.db]
command = '''${tcpServer(db, tag)}'''
ready_port = ${db}
`,
    );
    const up = await sb.run(["up"]);
    expect({ code: up.code, stderr: up.stderr }).toMatchObject({ code: 0 }); // the stderr shows why, if not
    expect(up.stderr).toMatch(/db: ready[\s\S]*web: ready/); // dependency order
    expect(await (await fetch(`http://127.0.0.1:${web}/`)).text()).toBe("web+db"); // web reached db at its start
    const again = await sb.run(["up"]);
    expect(again.stderr).toContain("db: already running");
    expect(again.stderr).toContain("web: already running");
    const down = await sb.run(["down"]);
    expect(down.code).toBe(0);
    expect(down.stderr.indexOf("web: stopped")).toBeLessThan(down.stderr.indexOf("db: stopped"));
    expect(alive(tag)).toEqual([]);
  });

  test("a service that fails to become ready: up exits non-zero naming it, with its output, and stops what it started", async () => {
    const db = port();
    const tag = `failing-up-${db}`;
    const file = join(sb.cwd, "broken.toml");
    writeFileSync(
      file,
      `[services.db]
command = '''${tcpServer(db, tag)}'''
ready_port = ${db}
[services.api]
command = "echo api cannot find its config >&2; exit 1"
depends_on = ["db"]
ready_port = ${port()}
`,
    );
    const r = await sb.run(["up", "-f", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("service 'api' failed to start");
    expect(r.stderr).toContain("api cannot find its config");
    expect(r.stderr).toContain("stopped again what this 'up' started: db");
    expect(alive(tag)).toEqual([]);
  });

  test("a dependency cycle and an unknown name are errors naming them (exit 2)", async () => {
    const file = join(sb.cwd, "cycle.toml");
    writeFileSync(file, `[services.a]\ncommand = "true"\ndepends_on = ["b"]\n[services.b]\ncommand = "true"\ndepends_on = ["a"]\n`);
    const cycle = await sb.run(["up", "-f", file]);
    expect(cycle.code).toBe(2);
    expect(cycle.stderr).toContain("dependency cycle");
    expect(cycle.stderr).toMatch(/a -> b -> a|b -> a -> b/);
    const file2 = join(sb.cwd, "unknown.toml");
    writeFileSync(file2, `[services.a]\ncommand = "true"\ndepends_on = ["nope"]\n`);
    const unknown = await sb.run(["up", "-f", file2]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("service 'a' depends on unknown service 'nope'");
    const file3 = join(sb.cwd, "fine.toml");
    writeFileSync(file3, `[services.a]\ncommand = "true"\n`);
    const missing = await sb.run(["down", "-f", file3, "zzz"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("unknown service 'zzz'");
  });

  test("over MCP, bash {service} starts a declared service with its dependencies", async () => {
    const db = port();
    const web = port();
    const tag = `mcp-service-${web}`;
    const dir = join(sb.cwd, "mcp-svc");
    await Bun.$`mkdir -p ${dir}`;
    writeFileSync(
      join(dir, "agent-shell.toml"),
      `[services.db]\ncommand = '''${tcpServer(db, tag)}'''\nready_port = ${db}\n[services.web]\ncommand = '''${httpServer(web, "hi", tag)}'''\ndepends_on = ["db"]\nready_port = ${web}\n`,
    );
    const r = await sb.run(["call", "bash", JSON.stringify({ service: "web", working_directory: dir })], { cwd: dir });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.services.map((s: { name: string }) => s.name)).toEqual(["db", "web"]);
    expect(await (await fetch(`http://127.0.0.1:${web}/`)).text()).toBe("hi");
    const down = await sb.run(["down"], { cwd: dir });
    expect(down.code).toBe(0);
    expect(alive(tag)).toEqual([]);
  });
});

describe("help", () => {
  test("config --help and mcp --help print their own help", async () => {
    const config = await runCli(["config", "--help"]);
    expect(config.code).toBe(0);
    expect(config.stdout).toStartWith("Usage: agent-shell config show");
    const mcp = await runCli(["mcp", "--help"]);
    expect(mcp.code).toBe(0);
    expect(mcp.stdout).toStartWith("Usage: agent-shell mcp");
  });

  test.each([[], ["start"], ["ps"], ["restart"], ["up"], ["down"], ["wait"], ["config"], ["mcp"]])("help lines fit 100 columns: %p", async (...verb) => {
    const r = await runCli([...(verb as string[]), "--help"]);
    expect(r.code).toBe(0);
    const long = r.stdout.split("\n").filter((l) => l.length > 100);
    expect(long).toEqual([]);
  });

  test("config show prints the state dir actually used", async () => {
    const r = await runCli(["config", "show"], { env: { XDG_STATE_HOME: "/tmp/xdg-state-probe" } });
    expect(r.stdout).toMatch(/state_dir\s+"\/tmp\/xdg-state-probe\/agent-shell"/);
  });
});

describe("logs", () => {
  test("merges stdout and stderr in write order; --stdout/--stderr one stream; --timestamps; --tail", async () => {
    const id = (await sb.run(["start", "--", "echo out1; sleep 0.05; echo err1 >&2; sleep 0.05; echo out2; sleep 0.05; echo err2 >&2"])).stdout.trim();
    await sb.run(["wait", id]);
    expect((await sb.run(["logs", id])).stdout).toBe("out1\nerr1\nout2\nerr2\n");
    expect((await sb.run(["logs", "--stdout", id])).stdout).toBe("out1\nout2\n");
    expect((await sb.run(["logs", "--stderr", id])).stdout).toBe("err1\nerr2\n");
    expect((await sb.run(["logs", "--tail", "2", id])).stdout).toBe("out2\nerr2\n");
    const stamped = (await sb.run(["logs", "--timestamps", id])).stdout.trim().split("\n");
    expect(stamped).toHaveLength(4);
    for (const line of stamped) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (out|err)\d$/);
    expect(Date.parse(stamped[3]!.split(" ")[0]!)).toBeGreaterThan(Date.parse(stamped[0]!.split(" ")[0]!));
  });

  test("--follow starts from the last 10 lines and ends with the task", async () => {
    const id = (await sb.run(["start", "--name", "follower", "--ready-pattern", "^line25$", "--", "seq -f line%g 1 25; read -t 1 x < /dev/zero; sleep 0.3; echo final >&2"])).stdout.trim();
    const follow = sb.spawn(["logs", "--follow", "follower"]);
    const text = await new Response(follow.stdout).text();
    expect(await follow.exited).toBe(0);
    const lines = text.trim().split("\n");
    expect(lines.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `line${16 + i}`));
    expect(lines.at(-1)).toBe("final");
    await sb.run(["kill", id]);
  });
});

describe("run --tty streams", () => {
  test("not on a terminal: each rendered line as soon as it is complete (escapes dropped, \\r redraws resolved)", async () => {
    const gate = join(sb.cwd, `gate-${port()}`);
    // The command waits for the test to see its first lines before it finishes.
    const proc = sb.spawn(["run", "--tty", "--", `printf 'progress 10%%\\rprogress 100%%\\n'; printf '\\033[31mred\\033[0m\\n'; while [ ! -e ${gate} ]; do sleep 0.02; done; echo done`]);
    const seen: string[] = [];
    let opened = false;
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk);
      if (!opened && buf.includes("red\n")) {
        seen.push(buf);
        opened = true;
        writeFileSync(gate, "");
      }
    }
    expect(await proc.exited).toBe(0);
    expect(seen[0]).toBe("progress 100%\nred\n"); // streamed while the command still ran
    expect(buf).toBe("progress 100%\nred\ndone\n");
  });

  test("on a terminal: the child's bytes go straight through (colours) while it runs", async () => {
    const dir = join(sb.cwd, `tmux-${port()}`);
    await Bun.$`mkdir -p ${dir}`;
    const tmux = (...args: string[]) => Bun.spawnSync(["tmux", "-S", join(dir, "s"), ...args], { stdout: "pipe", stderr: "pipe" });
    const shell = `env -i PATH=${process.env.PATH} HOME=${process.env.HOME} TERM=xterm-256color AGENT_SHELL_STATE_DIR=${sb.stateDir} bash --norc --noprofile`;
    expect(tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "20", shell).exitCode).toBe(0);
    try {
      const gate = join(dir, "gate");
      tmux("send-keys", "-t", "t", `${process.cwd()}/dist/agent-shell run --tty -- 'printf "\\033[32mgreen-live\\033[0m\\n"; while [ ! -e ${gate} ]; do sleep 0.02; done'; echo exit=$?`, "Enter");
      let text = "";
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && !/\x1b\[32mgreen-live/.test(text)) {
        text = tmux("capture-pane", "-p", "-e", "-t", "t").stdout.toString();
        await Bun.sleep(25);
      }
      expect(text).toMatch(/\x1b\[32mgreen-live/); // the colour arrived, while the command still runs
      expect(text).not.toMatch(/^exit=/m);
      writeFileSync(gate, "");
      while (Date.now() < deadline && !/^exit=0/m.test(text)) {
        text = tmux("capture-pane", "-p", "-t", "t").stdout.toString();
        await Bun.sleep(25);
      }
      expect(text).toMatch(/^exit=0/m);
    } finally {
      tmux("kill-server");
    }
  });
});
