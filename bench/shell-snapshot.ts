/**
 * What starting from the user's shell costs per command (SPEC §23; goal: ≤ 1 ms median more
 * than without). A home with a typical rc file (PATH additions, exports, three aliases, three
 * functions: what nvm or pyenv users carry) is captured once; then `true` is started through
 * the kept spawner (the runtime's piped path, bench/helper-floor.ts's way) with the server's
 * own environment, and with the snapshot's plus BASH_ENV naming the prelude, interleaved, and
 * the same through the MCP server (SDK client), snapshot off and on. `bun run bench/shell-snapshot.ts`.
 */
import { closeSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultStateDir } from "../src/background/state/index.ts";
import { ConfigSchema } from "../src/config/schema.ts";
import { childEnv } from "../src/runtime/env.ts";
import { releaseContainment } from "../src/runtime/local/local-process.ts";
import { spawnServed } from "../src/runtime/local/served-spawn.ts";
import { preludeFile } from "../src/runtime/shell-snapshot/shell-prelude.ts";
import { takeShellSnapshot } from "../src/runtime/shell-snapshot/shell-snapshot.ts";
import { configureHelper } from "../src/runtime/spawn-helper/helper-binary.ts";
import { sandboxFromConfig } from "../src/sandbox/setup.ts";
import { startServer } from "../tests/helpers/mcp.ts";
import { closeHelperFloors } from "./helper-floor.ts";
import { drain, machine, round, stats } from "./lib.ts";

const CALLS = 300;
const RC = `export PATH="$HOME/.nvm/versions/node/v22/bin:$HOME/.cargo/bin:$HOME/.pyenv/shims:$PATH"
export NVM_DIR="$HOME/.nvm" EDITOR=vim LANG=C.UTF-8 GOPATH="$HOME/go" PYENV_ROOT="$HOME/.pyenv"
alias ll='ls -alF'
alias gs='git status'
alias k=kubectl
nvm() { echo "nvm $*"; }
mkcd() { mkdir -p "$1" && cd "$1"; }
gitroot() { cd "$(git rev-parse --show-toplevel)"; }
`;

const home = realpathSync(mkdtempSync("/var/tmp/as-bench-shell-"));
const state = realpathSync(mkdtempSync("/var/tmp/as-bench-shell-state-"));
const cwd = join(home, "work");
mkdirSync(cwd);
writeFileSync(join(home, ".bashrc"), RC);
process.env.XDG_CONFIG_HOME = join(home, ".config");
try {
  const snapshot = await takeShellSnapshot({ ...process.env, HOME: home, SHELL: "/bin/bash" });
  if (snapshot.failure) throw new Error(snapshot.failure);
  const plain = childEnv();
  const own = { ...childEnv(undefined, { shellEnv: snapshot.env }), BASH_ENV: preludeFile(snapshot.definitions, undefined) };

  configureHelper(state);
  const sandbox = sandboxFromConfig(ConfigSchema.parse({}), { allowedRoots: [cwd], stateRoot: state, defaultStateRoot: defaultStateDir() });
  const floor = async (env: Record<string, string>, sandboxed: boolean) => {
    const run = sandboxed ? sandbox.forCall(sandbox.mode, { cwd }).run : undefined;
    const t0 = performance.now();
    const served = await spawnServed({ command: "true", cwd, env, stdin: null, sandbox: run });
    if (!served) throw new Error("no spawner (no task cgroup here?)");
    await Promise.all([drain(Bun.file(served.stdout).stream()), drain(Bun.file(served.stderr).stream()), served.started.proc.exited]);
    closeSync(served.stdout);
    closeSync(served.stderr);
    releaseContainment(served.started.containment);
    return performance.now() - t0;
  };

  const rows: Array<[string, ReturnType<typeof stats>, ReturnType<typeof stats>]> = [];
  for (const sandboxed of [false, true]) {
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < 20; i++) await floor(plain, sandboxed), await floor(own, sandboxed);
    for (let i = 0; i < CALLS; i++) {
      a.push(await floor(plain, sandboxed));
      b.push(await floor(own, sandboxed));
    }
    rows.push([`spawner floor, ${sandboxed ? "sandboxed" : "unsandboxed"}`, stats(a), stats(b)]);
  }
  closeHelperFloors();

  // Through the MCP server, as a harness sees it: snapshot off, and on (same home), interleaved.
  const env = { HOME: home, SHELL: "/bin/bash", XDG_CONFIG_HOME: join(home, ".config") };
  const off = await startServer({ env: { ...env, AGENT_SHELL_SHELL_SNAPSHOT: "false" }, cwd });
  const on = await startServer({ env: { ...env, AGENT_SHELL_SHELL_SNAPSHOT: "true" }, cwd });
  try {
    const ok = await on.call("bash", { command: "type -t ll mkcd" });
    if (ok.stdout !== "alias\nfunction\n") throw new Error(`the snapshot is not in use: ${JSON.stringify(ok)}`);
    const timed = async (s: typeof on) => {
      const t0 = performance.now();
      await s.call("bash", { command: "true" });
      return performance.now() - t0;
    };
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < 20; i++) await timed(off), await timed(on);
    for (let i = 0; i < CALLS; i++) {
      a.push(await timed(off));
      b.push(await timed(on));
    }
    rows.push(["`bash {command: true}` over MCP (SDK client)", stats(a), stats(b)]);
  } finally {
    await off.close();
    await on.close();
  }

  console.log(`snapshot: ${Object.keys(snapshot.env).length} variables, ${snapshot.aliases.length} aliases, ${snapshot.functions.length} functions, taken in ${snapshot.tookMs} ms`);
  console.log(JSON.stringify(machine()));
  console.log("| path | without p50 / p99 | from the snapshot p50 / p99 | p50 difference |\n|---|---|---|---|");
  for (const [name, a, b] of rows) {
    console.log(`| ${name} | ${round(a.p50)} / ${round(a.p99)} ms | ${round(b.p50)} / ${round(b.p99)} ms | ${round(b.p50 - a.p50)} ms |`);
  }
} finally {
  rmSync(home, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
}
