/**
 * Ordinary developer steps (Node, Python, C, Rust, git, services, everyday commands) run twice:
 * in a plain bash, and through `agent-shell mcp` with the default sandbox, each in a project
 * folder and HOME of its own. Each row is classified as a user would see it:
 * - "as in a terminal": same exit status and same effect (the `check`, run outside, agrees);
 * - "refused, clear": agent-shell did not do it and said why (`sandbox_denied` with a kind and
 *   a hint, or a BLOCKED error naming the reason);
 * - "refused, unclear": it failed where the terminal did not, and nothing says the sandbox did it;
 * - "silently different": it said it worked, but the effect differs.
 * Used by tests/sandbox/workflows/workflows.test.ts (no row may be unclear or silently different) and by
 * scripts/workflow-table.ts (docs/workflows.md).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { McpSession } from "../../helpers/mcp.ts";

export interface Step {
  area: string;
  name: string;
  command: string;
  /** Run outside afterwards, in the project folder (HOME set): its output must agree. */
  check?: string;
  /** The terminal run would change this machine outside the test's folders (a global install): not run there. */
  terminalSkip?: boolean;
  /** Needs this program on PATH. */
  needs?: string;
}

export type Verdict = "as in a terminal" | "refused, clear" | "refused, unclear" | "silently different";

export interface Row {
  step: Step;
  verdict: Verdict;
  detail: string;
}

/** The steps, in order: later ones build on what earlier ones made (as a session would). */
export function steps(outside: string): Step[] {
  return [
    { area: "Node", name: "npm init", command: "npm init -y >/dev/null && node -p 'require(\"./package.json\").name'", check: "test -f package.json && echo yes" },
    { area: "Node", name: "a package script", command: `npm pkg set scripts.build='node -e "require(\\"fs\\").writeFileSync(\\"out.txt\\", \\"built\\")"' && npm run -s build`, check: "cat out.txt" },
    { area: "Node", name: "npm install (no dependencies; writes the lock file and ~/.npm)", command: "npm install --offline --no-audit --no-fund >/dev/null 2>&1; echo done", check: "test -f package-lock.json && echo lock" },
    { area: "Node", name: "a failing node --test", command: "printf 'const t=require(\"node:test\");const a=require(\"node:assert\");t.test(\"x\",()=>a.strictEqual(1,2));' > x.test.js && node --test x.test.js >/dev/null 2>&1" },
    { area: "Node", name: "npm install -g (a global folder)", command: "mkdir -p gpkg && printf '{\"name\":\"wf-gpkg\",\"version\":\"1.0.0\"}' > gpkg/package.json && npm install -g ./gpkg --no-audit --no-fund", terminalSkip: true },
    { area: "Python", name: "python3 -m venv", command: "python3 -m venv .venv && .venv/bin/python -c 'import sys; print(sys.prefix != sys.base_prefix)'", check: "test -x .venv/bin/python && echo yes" },
    { area: "Python", name: "a script writes a file", command: "python3 -c 'open(\"py.txt\",\"w\").write(\"ok\")'", check: "cat py.txt" },
    { area: "Python", name: "a traceback", command: "python3 -c 'raise ValueError(1)'" },
    { area: "C", name: "gcc and run", command: "printf '#include <stdio.h>\\nint main(){puts(\"hi\");return 0;}\\n' > hello.c && gcc -o hello hello.c && ./hello", check: "./hello" },
    { area: "C", name: "make", command: "printf 'all: hello2\\nhello2: hello.c\\n\\tgcc -o hello2 hello.c\\nclean:\\n\\trm -f hello2\\n' > Makefile && make -s && ./hello2", check: "test -x hello2 && echo yes" },
    { area: "C", name: "make clean", command: "make -s clean", check: "test -e hello2 && echo left || echo gone" },
    { area: "Rust", name: "cargo new and build (offline)", command: "cargo new -q --vcs none rs && cd rs && cargo build -q --offline && ./target/debug/rs", check: "test -x rs/target/debug/rs && echo yes", needs: "cargo" },
    { area: "git", name: "git init and commit", command: "git init -q -b main && git add -A . >/dev/null 2>&1; git -c user.name=t -c user.email=t@t commit -q -m first && git log --oneline | wc -l", check: "git log --oneline | wc -l" },
    { area: "git", name: "git config user.email", command: "git config user.email dev@example.com", check: "git config user.email" },
    { area: "git", name: "a bare repository beside the project (outside the writable roots)", command: "git init -q --bare ../origin.git -b main", terminalSkip: true },
    { area: "git", name: "git remote add and push -u to a bare repository", command: "git init -q --bare remotes/origin.git -b main && git remote add origin remotes/origin.git && git push -q -u origin main", check: "git config branch.main.remote" },
    { area: "git", name: "a tracking branch", command: "git switch -q -c feature && git push -q -u origin feature", check: "git config branch.feature.merge" },
    { area: "git", name: "git worktree add beside the project (outside the writable roots)", command: "git worktree add -q ../wt -b wt-out", terminalSkip: true },
    { area: "git", name: "git worktree add", command: "git worktree add -q .worktrees/wt -b wt", check: "git -C .worktrees/wt status --short >/dev/null && echo works" },
    { area: "git", name: "the worktree in a later call", command: "cd .worktrees/wt && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m in-wt && git log --oneline -1 | grep -c in-wt", check: "git -C .worktrees/wt log --oneline -1 | grep -c in-wt" },
    { area: "git", name: "git submodule add", command: "git init -q remotes/lib -b main && git -C remotes/lib -c user.name=t -c user.email=t@t commit -q --allow-empty -m lib && git -c protocol.file.allow=always submodule add -q \"$PWD/remotes/lib\" libs/lib", check: "test -e libs/lib/.git && git config --get-regexp '^submodule' | wc -l" },
    { area: "git", name: "a person's pre-commit hook runs", command: `git switch -q main && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m hooked && cat hook-ran`, check: "cat hook-ran" },
    { area: "git", name: "git config --global", command: "git config --global user.name someone", terminalSkip: true },
    { area: "Services", name: "a server left running (python3 -m http.server &)", command: "python3 -m http.server 18731 --bind 127.0.0.1 >/dev/null 2>&1 & for i in $(seq 50); do curl -s -o /dev/null 127.0.0.1:18731 && break; sleep 0.1; done; echo started" },
    { area: "Services", name: "the server from a later call", command: "curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:18731", check: "for i in $(seq 30); do c=$(curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:18731); [ \"$c\" = 200 ] && break; sleep 0.1; done; echo $c" },
    { area: "Everyday", name: "find ~", command: "find ~ >/dev/null; echo $?" },
    { area: "Everyday", name: "du -s ~", command: "du -s ~ >/dev/null; echo $?" },
    { area: "Everyday", name: "a tool cache that does not exist yet (~/.cache, ~/go)", command: "mkdir -p ~/go/pkg ~/.cache/wf && touch ~/.cache/wf/x ~/go/pkg/y && echo ok", check: "test -e ~/.cache/wf/x && test -e ~/go/pkg/y && echo ok" },
    { area: "Everyday", name: "sqlite3", command: "sqlite3 db.sqlite 'create table t(x); insert into t values (1); select count(*) from t;'", check: "sqlite3 db.sqlite 'select count(*) from t;'", needs: "sqlite3" },
    { area: "Everyday", name: "rm -rf a build folder", command: "mkdir -p build && touch build/a && rm -rf ./build && echo gone", check: "test -e build && echo left || echo gone" },
    { area: "Everyday", name: "cat ~/.npmrc (a secret)", command: "cat ~/.npmrc" },
    { area: "Everyday", name: "write outside the project", command: `touch ${outside}/planted` , terminalSkip: true },
    { area: "Everyday", name: "sudo", command: "sudo -n true", terminalSkip: true },
  ];
}

/** A project folder and HOME for one side, with what the steps expect to find. */
export function makeSide(base: string, name: string): { project: string; home: string } {
  const project = join(base, name, "project");
  const home = join(base, name, "home");
  mkdirSync(project, { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, ".npmrc"), "//registry.example/:_authToken=secret\n");
  return { project, home };
}

/** The person's hook, made outside before the git steps reach it (a person's own). */
export function installPersonHook(project: string): void {
  const hooks = join(project, ".git", "hooks");
  mkdirSync(hooks, { recursive: true });
  writeFileSync(join(hooks, "pre-commit"), "#!/bin/sh\necho ran > hook-ran\n", { mode: 0o755 });
}

export function tempBase(): string {
  mkdirSync("/var/tmp", { recursive: true });
  return realpathSync(mkdtempSync("/var/tmp/as-workflows-"));
}

export function removeBase(base: string): void {
  rmSync(base, { recursive: true, force: true });
}

/** What both sides run with: their own HOME, and the machine's Rust toolchains (rustup keeps them in the real home). */
function sideEnv(home: string): Record<string, string> {
  const rustup = process.env.RUSTUP_HOME ?? join(process.env.HOME ?? "/root", ".rustup");
  return { HOME: home, RUSTUP_HOME: rustup, GIT_TERMINAL_PROMPT: "0", npm_config_update_notifier: "false" };
}

function env(home: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) out[k] = v;
  return { ...out, ...sideEnv(home) };
}

/** Runs `command` in a plain bash, as a terminal would. */
export function runInTerminal(command: string, cwd: string, home: string): { code: number; output: string } {
  const r = Bun.spawnSync(["bash", "-c", command], { cwd, env: env(home), stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, output: r.stdout.toString() + r.stderr.toString() };
}

/** The effect, as seen from outside. */
export function check(step: Step, cwd: string, home: string): string {
  return step.check ? runInTerminal(step.check, cwd, home).output.trim() : "";
}

/** Runs one step through agent-shell (a model that confirms after asking its person). */
export async function runInAgentShell(session: McpSession, command: string): Promise<any> {
  const first = await session.call("bash", { command, timeout_seconds: 120 });
  return first?.needs_confirmation ? session.call("bash", { command, timeout_seconds: 120, confirmed: true }) : first;
}

export function classify(terminal: { code: number } | null, agent: any, same: boolean): { verdict: Verdict; detail: string } {
  const agentCode = typeof agent?.exit_code === "number" ? agent.exit_code : null;
  const refusal = agent?.sandbox_denied ? `${agent.sandbox_denied.kind}: ${agent.sandbox_denied.hint}` : agent?.error_code === "BLOCKED" ? String(agent.error) : null;
  if (terminal && agentCode === terminal.code && same) return { verdict: "as in a terminal", detail: `exit ${agentCode}` };
  if (!terminal && agentCode === 0 && same) return { verdict: "as in a terminal", detail: "exit 0" };
  if (refusal) return { verdict: "refused, clear", detail: refusal.slice(0, 160) };
  if (agentCode === 0 || (terminal && agentCode === terminal.code)) return { verdict: "silently different", detail: `exit ${agentCode}, effect differs` };
  return { verdict: "refused, unclear", detail: `exit ${agentCode ?? agent?.error_code}: ${String(agent?.stderr ?? agent?.error ?? "").trim().split("\n").pop()?.slice(0, 160)}` };
}

/** Runs every step on both sides and classifies each; `start` makes the agent-shell session. */
export async function runWorkflows(start: (opts: { cwd: string; env: Record<string, string> }) => Promise<McpSession>): Promise<Row[]> {
  const base = tempBase();
  const terminal = makeSide(base, "terminal");
  const agent = makeSide(base, "agent");
  const ports = { terminal: 18731, agent: 18732 };
  const session = await start({ cwd: agent.project, env: sideEnv(agent.home) });
  const rows: Row[] = [];
  try {
    for (const step of steps(join(base, "outside"))) {
      if (step.needs && !Bun.which(step.needs)) continue;
      const port = (side: keyof typeof ports) => step.command.replaceAll("18731", String(ports[side]));
      const t = step.terminalSkip ? null : runInTerminal(port("terminal"), terminal.project, terminal.home);
      const a = await runInAgentShell(session, port("agent"));
      const same = check({ ...step, check: step.check?.replaceAll("18731", String(ports.terminal)) }, terminal.project, terminal.home) === check({ ...step, check: step.check?.replaceAll("18731", String(ports.agent)) }, agent.project, agent.home);
      rows.push({ step, ...classify(t, a, same) });
      if (step.name === "git init and commit") for (const side of [terminal, agent]) installPersonHook(side.project);
    }
  } finally {
    await session.close();
    Bun.spawnSync(["pkill", "-f", `http.server ${ports.terminal}`]);
    removeBase(base);
  }
  return rows;
}
