/**
 * SPEC §17: the npm package set of `bun run package`, tested as a user gets it — the three
 * tarballs' manifests and binaries, `npm install` of the main and the linux-x64 tarball
 * (the launcher in node_modules/.bin runs the binary with the same arguments, stdio, exit
 * status and signals; MCP over stdio through it), and the cross-built linux-arm64 binary run
 * under qemu-user (scripts/ensure-system-deps.sh installs qemu-user-static and
 * libc6-arm64-cross). The package set is built once here, for the whole file.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { alive, BINARY, startServer } from "../helpers/mcp.ts";
import { processes, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

setDefaultTimeout(60_000);

const ROOT = resolve(import.meta.dir, "../..");
const NPM_DIR = join(ROOT, "dist/npm");
const V = pkg.version;
const TARBALL = {
  main: join(NPM_DIR, `agent-shell-${V}.tgz`),
  x64: join(NPM_DIR, `agent-shell-linux-x64-${V}.tgz`),
  arm64: join(NPM_DIR, `agent-shell-linux-arm64-${V}.tgz`),
};
const QEMU = ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu"];
/** ELF e_machine values (offset 18, little-endian). */
const EM_X86_64 = 62;
const EM_AARCH64 = 183;

let work: string;
let prefix: string;
let launcher: string;
let arm64Binary: string;

/** Environment without any AGENT_SHELL_* of the caller, with a private state dir. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AGENT_SHELL_")) env[k] = v;
  // npm's cache too: nothing of the test stays in ~/.npm.
  return { ...env, AGENT_SHELL_STATE_DIR: join(work, "state"), npm_config_cache: join(work, "npm-cache"), ...extra };
}

async function run(argv: string[], env = cleanEnv()) {
  const proc = Bun.spawn(argv, { cwd: work, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code, signal: proc.signalCode };
}

function manifest(tarball: string): Record<string, any> {
  const out = Bun.spawnSync(["tar", "-xzOf", tarball, "package/package.json"]);
  expect(out.exitCode).toBe(0);
  return JSON.parse(out.stdout.toString());
}

function tarEntries(tarball: string): string[] {
  const out = Bun.spawnSync(["tar", "-tzf", tarball]);
  return out.stdout.toString().trim().split("\n").sort();
}

function elfMachine(path: string): number {
  const fd = openSync(path, "r");
  const head = Buffer.alloc(20);
  readSync(fd, head, 0, 20, 0);
  closeSync(fd);
  expect(head.subarray(0, 4).toString("latin1")).toBe("\x7fELF");
  return head.readUInt16LE(18);
}

/** Resolves once `sleep MARKER` itself runs (the launcher's and the binary's argv also name it). */
async function commandRunning(marker: string): Promise<void> {
  while (!processes().some((p) => p.cmdline === `sleep ${marker}`)) await Bun.sleep(20);
}

beforeAll(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), "as-npm-")));
  const packed = Bun.spawn(["bun", "run", "scripts/package.ts"], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  expect(await packed.exited).toBe(0);
  prefix = join(work, "prefix");
  const install = await run(["npm", "install", "--prefix", prefix, "--omit=optional", "--no-audit", "--no-fund", "--loglevel=error", "--offline", TARBALL.x64, TARBALL.main], cleanEnv());
  expect(install).toMatchObject({ code: 0 });
  launcher = join(prefix, "node_modules/.bin/agent-shell");
  const unpacked = join(work, "arm64");
  Bun.spawnSync(["mkdir", "-p", unpacked]);
  expect(Bun.spawnSync(["tar", "-xzf", TARBALL.arm64, "-C", unpacked]).exitCode).toBe(0);
  arm64Binary = join(unpacked, "package/bin/agent-shell");
}, 300_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe("bun run package", () => {
  test("the main package has the launcher in bin, both platform packages as optional dependencies, and no install script", () => {
    const m = manifest(TARBALL.main);
    expect(m.name).toBe("agent-shell");
    expect(m.version).toBe(V);
    expect(m.bin).toEqual({ "agent-shell": "bin/agent-shell.js" });
    expect(m.exports).toEqual({ ".": { bun: "./lib/index.js" } });
    expect(m.optionalDependencies).toEqual({ "agent-shell-linux-x64": V, "agent-shell-linux-arm64": V });
    expect(m.dependencies).toBeUndefined();
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) expect(m.scripts?.[hook]).toBeUndefined();
    expect(tarEntries(TARBALL.main)).toEqual(["package/README.md", "package/bin/agent-shell.js", "package/lib/index.js", "package/package.json"]);
  });

  test("each platform package declares os linux and its cpu, and carries one binary of that ELF machine", () => {
    for (const [platform, cpu, machine, binary] of [
      ["linux-x64", "x64", EM_X86_64, join(prefix, "node_modules/agent-shell-linux-x64/bin/agent-shell")],
      ["linux-arm64", "arm64", EM_AARCH64, arm64Binary],
    ] as const) {
      const tarball = platform === "linux-x64" ? TARBALL.x64 : TARBALL.arm64;
      const m = manifest(tarball);
      expect({ name: m.name, version: m.version, os: m.os, cpu: m.cpu, scripts: m.scripts, bin: m.bin }).toEqual({
        name: `agent-shell-${platform}`,
        version: V,
        os: ["linux"],
        cpu: [cpu],
        scripts: undefined,
        bin: undefined,
      });
      expect(tarEntries(tarball)).toEqual(["package/README.md", "package/bin/agent-shell", "package/bin/agent-shell-helper", "package/package.json"]);
      expect(elfMachine(binary)).toBe(machine);
      expect(elfMachine(join(binary, "../agent-shell-helper"))).toBe(machine);
    }
  });
});

describe("npm install of the x64 and main tarballs", () => {
  test("--version equals the built binary's", async () => {
    const [viaNpm, built] = await Promise.all([run([launcher, "--version"]), run([BINARY, "--version"])]);
    expect(viaNpm).toMatchObject({ code: 0, stdout: built.stdout, stderr: "" });
    expect(built.stdout).toBe(`agent-shell ${V}\n`);
  });

  test("call bash prints the result and exits 1 on an error result, 0 otherwise", async () => {
    const ok = await run([launcher, "call", "bash", JSON.stringify({ command: "echo from-npm; echo err >&2" })]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ exit_code: 0, stdout: "from-npm\n", stderr: "err\n", success: true });
    const bad = await run([launcher, "call", "bash", JSON.stringify({ command: 42 })]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error_code: "INVALID_ARGUMENT" });
  });

  test("run -- sh -c 'exit 7' exits 7", async () => {
    const r = await run([launcher, "run", "--", "sh", "-c", "exit 7"]);
    expect(r.code).toBe(7);
  });

  test("a signal sent to the launcher reaches the binary, and the launcher exits as the binary did", async () => {
    const marker = uniqueSleep();
    const proc = Bun.spawn([launcher, "run", "--", "sleep", marker], { cwd: work, env: cleanEnv(), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    // The command runs once its sleep is in the process table.
    await commandRunning(marker);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(143); // `run`'s code for SIGTERM (SPEC §8), passed through
    expect(proc.signalCode).toBeNull();
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
  });

  test("a binary killed by a signal makes the launcher die of the same signal", async () => {
    const marker = uniqueSleep();
    const proc = Bun.spawn([launcher, "run", "--", "sleep", marker], { cwd: work, env: cleanEnv(), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    await commandRunning(marker);
    const binary = processes().find((p) => p.ppid === proc.pid);
    expect(binary?.cmdline).toContain("agent-shell-linux-x64/bin/agent-shell run");
    process.kill(binary!.pid, "SIGKILL");
    await proc.exited;
    expect(proc.signalCode).toBe("SIGKILL");
    // The killed binary's watchdog ends its command.
    expect(await waitNoProcess(`sleep ${marker}`)).toEqual([]);
  });

  test("an MCP session over stdio through the launcher lists the tools and runs a command", async () => {
    const s = await startServer({ command: [launcher] });
    try {
      const { tools } = await s.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["bash", "kill_shell", "task", "task_list", "task_output", "write_stdin"]);
      expect(await s.call("bash", { command: "echo over-mcp; exit 3" })).toMatchObject({ exit_code: 3, stdout: "over-mcp\n" });
    } finally {
      await s.close();
    }
    expect(alive(s.pid)).toBe(false);
  });

  test("without this platform's package the launcher names the package to install", async () => {
    const lone = join(work, "lone");
    const install = await run(["npm", "install", "--prefix", lone, "--omit=optional", "--no-audit", "--no-fund", "--loglevel=error", "--offline", TARBALL.main]);
    expect(install.code).toBe(0);
    const r = await run([join(lone, "node_modules/.bin/agent-shell"), "--version"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`npm install agent-shell-linux-x64@${V}`);
  });
});

describe("the ways people install MCP servers, from the tarballs", () => {
  test("npm install -g puts agent-shell on the prefix's PATH", async () => {
    const global = join(work, "global");
    const install = await run(["npm", "install", "-g", "--prefix", global, "--offline", "--no-audit", "--no-fund", "--loglevel=error", TARBALL.x64, TARBALL.main]);
    expect(install.code).toBe(0);
    const r = await run(["agent-shell", "run", "--", "sh", "-c", "echo global; exit 2"], cleanEnv({ PATH: `${join(global, "bin")}:${process.env.PATH}` }));
    expect(r).toMatchObject({ code: 2, stdout: "global\n" });
  });

  test("npx runs it (npm exec with the packages)", async () => {
    const r = await run(["npm", "exec", "--yes", "--offline", `--package=${TARBALL.main}`, `--package=${TARBALL.x64}`, "--", "agent-shell", "--version"]);
    expect(r).toMatchObject({ code: 0, stdout: `agent-shell ${V}\n` });
  });
});

describe("the library from the tarballs", () => {
  test("bun add of the main and x64 tarballs into a fresh folder, then createToolHost runs `echo hi` under Bun, no build step", async () => {
    const app = join(work, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    // Bun's cache in the test's folder: nothing of it stays behind.
    const env = cleanEnv({ BUN_INSTALL_CACHE_DIR: join(work, "bun-cache") });
    const bun = (argv: string[]) => {
      const r = Bun.spawnSync(argv, { cwd: app, env, stdin: "ignore" });
      return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
    };
    // The platform package from its tarball; the main package's optional ones are not fetched.
    const add = bun(["bun", "add", "--omit", "optional", TARBALL.x64, TARBALL.main]);
    expect(add.stderr).not.toContain("error:");
    expect(add.code).toBe(0);
    writeFileSync(
      join(app, "main.ts"),
      'import { createToolHost } from "agent-shell";\n' +
        `const host = createToolHost({ state_dir: ${JSON.stringify(join(work, "lib-state"))} });\n` +
        'console.log(JSON.stringify(await host.call("bash", { command: "echo hi" })));\n' +
        "await host.close();\n",
    );
    const r = bun(["bun", "main.ts"]);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toMatchObject({ stdout: "hi\n", exit_code: 0, success: true });
    // The spawn helper it ran is the platform package's.
    const helper = readFileSync(join(app, "node_modules/agent-shell-linux-x64/bin/agent-shell-helper"));
    const copies = readdirSync(join(work, "lib-state/bin")).filter((f) => f.startsWith("agent-shell-helper-"));
    expect(copies.map((f) => readFileSync(join(work, "lib-state/bin", f)).equals(helper))).toEqual([true]);
  });
});

describe("the linux-arm64 binary under qemu-user", () => {
  // With the sandbox off: qemu-user runs a program with threads of its own, and the kernel lets
  // only a single-threaded process enter a kept sandbox's namespaces (setns: EINVAL). On arm64
  // hardware the spawn helper is an ordinary single-threaded process.
  const emulated = () => cleanEnv({ AGENT_SHELL_SANDBOX: "off" });

  test("--version", async () => {
    const r = await run([...QEMU, arm64Binary, "--version"]);
    expect(r).toMatchObject({ code: 0, stdout: `agent-shell ${V}\n` });
  });

  test("a call bash", async () => {
    const r = await run([...QEMU, arm64Binary, "call", "bash", JSON.stringify({ command: "echo on-arm64; exit 4" })], emulated());
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ exit_code: 4, stdout: "on-arm64\n", success: false });
  });

  test("a background task over MCP: started, awaited, its output read", async () => {
    const s = await startServer({ command: [...QEMU, arm64Binary], env: { AGENT_SHELL_SANDBOX: "off" } });
    try {
      const started = await s.call("bash", { command: "sleep 0.2; echo bg-arm64; exit 5", run_in_background: true });
      expect(started).toMatchObject({ status: "running" });
      const done = await s.call("task_output", { task_id: started.task_id, wait: true, timeout: 30 });
      expect(done).toMatchObject({ status: "completed", exit_code: 5, stdout: "bg-arm64\n" });
    } finally {
      await s.close();
    }
  });
});
