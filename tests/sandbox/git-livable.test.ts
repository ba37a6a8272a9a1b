/**
 * SPEC §25: git works inside the sandbox. `.git/config` is writable (config, remotes, push -u,
 * tracking branches, submodules take effect, checked with git from outside); what would make
 * git run a program is disarmed and reported in `git_disarmed`, also while the command that
 * wrote it still runs; worktrees keep working in later calls and for the person; at the
 * Landlock level a hook a command rewrote is put back. Everything lives under one temp folder.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";

let base: string;
let work: string;
let home: string;
let s: McpSession;
let landlock: McpSession;

const GIT_ENV = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t", GIT_TERMINAL_PROMPT: "0" };

/** git as the person runs it, outside the sandbox. */
function git(cwd: string, ...args: string[]): { code: number; out: string } {
  const r = Bun.spawnSync(["git", "-C", cwd, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, HOME: home, ...GIT_ENV } });
  return { code: r.exitCode ?? -1, out: r.stdout.toString().trim() };
}

/** A call as a model that confirms itself would make it (git branch -D and chmod ask first). */
async function insist(server: McpSession, args: Record<string, unknown>): Promise<any> {
  const first = await server.call("bash", args);
  return first?.needs_confirmation ? server.call("bash", { ...args, confirmed: true }) : first;
}

function freshRepo(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  git(dir, "commit", "-q", "--allow-empty", "-m", "first");
  return dir;
}

beforeAll(async () => {
  base = realpathSync(mkdtempSync("/var/tmp/as-git-livable-"));
  work = join(base, "work");
  home = join(base, "home");
  mkdirSync(work);
  mkdirSync(home);
  const env = { HOME: home, ...GIT_ENV };
  s = await startServer({ cwd: work, env });
  landlock = await startServer({ cwd: work, env: { ...env, AGENT_SHELL_SANDBOX_LEVEL: "landlock" } });
});

afterAll(async () => {
  await s?.close();
  await landlock?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("git works inside the sandbox", () => {
  test("git config, remote add, push -u to a local bare repository and a tracking switch take effect", async () => {
    const repo = freshRepo("app");
    Bun.spawnSync(["git", "init", "-q", "--bare", "-b", "main", join(work, "origin.git")]);
    const r = await insist(s, {
      command: "git config user.email dev@example.com && git remote add origin ../origin.git && git push -q -u origin main && git branch feature && git push -q origin feature && git branch -D feature && git switch -q feature && git branch --set-upstream-to=origin/main feature",
      working_directory: repo,
    });
    expect(r.exit_code).toBe(0);
    expect(r.sandbox_denied).toBeUndefined();
    expect(git(repo, "config", "user.email").out).toBe("dev@example.com");
    expect(git(repo, "config", "remote.origin.url").out).toBe("../origin.git");
    expect(git(repo, "config", "branch.main.remote").out).toBe("origin");
    expect(git(repo, "config", "branch.feature.merge").out).toBe("refs/heads/main");
    expect(git(join(work, "origin.git"), "rev-parse", "main").code).toBe(0);
    expect(r.git_disarmed).toBeUndefined();
  });

  test("git submodule add, and config in a repository made in an earlier call", async () => {
    const lib = freshRepo("lib");
    const made = await s.call("bash", { command: "git init -q -b main later && cd later && git commit -q --allow-empty -m x" });
    expect(made.exit_code).toBe(0);
    const r = await s.call("bash", {
      command: `git config user.name later-name && git -c protocol.file.allow=always submodule add -q ${lib} libs/lib`,
      working_directory: join(work, "later"),
    });
    expect(r.exit_code).toBe(0);
    expect(git(join(work, "later"), "config", "user.name").out).toBe("later-name");
    expect(git(join(work, "later"), "config", "submodule.libs/lib.url").out).toBe(lib);
    expect(existsSync(join(work, "later", "libs", "lib", ".git"))).toBe(true);
    expect(git(join(work, "later", "libs", "lib"), "log", "--oneline").out).toContain("first");
  });

  test("core.fsmonitor and a ! alias written by a command are reported and do not run for the person; keys there before stay", async () => {
    const repo = freshRepo("armed");
    git(repo, "config", "alias.mine", "!echo person's own");
    const marker = join(base, "fsmonitor-ran");
    const r = await s.call("bash", {
      command: `git config core.fsmonitor 'touch ${marker}; false' && git config alias.boom '!touch ${marker}' && git config user.name kept`,
      working_directory: repo,
    });
    expect(r.exit_code).toBe(0);
    const keys = (r.git_disarmed ?? []).map((d: any) => d.key).sort();
    expect(keys).toEqual(["alias.boom", "core.fsmonitor"]);
    const fsmonitor = r.git_disarmed.find((d: any) => d.key === "core.fsmonitor");
    expect(fsmonitor.repository).toBe(repo);
    expect(fsmonitor.restore).toContain("config --add core.fsmonitor");
    git(repo, "status");
    git(repo, "boom");
    expect(existsSync(marker)).toBe(false);
    expect(git(repo, "config", "user.name").out).toBe("kept");
    expect(git(repo, "config", "alias.mine").out).toBe("!echo person's own");
  });

  test("a key written by a background task that keeps running is disarmed while it runs", async () => {
    const repo = freshRepo("watched");
    const marker = join(base, "bg-fsmonitor-ran");
    const bg = await s.call("bash", { command: `git config core.fsmonitor 'touch ${marker}; false' && echo written && sleep 30`, working_directory: repo, run_in_background: true });
    for (let i = 0; i < 200 && !(await s.call("task_output", { task_id: bg.task_id })).stdout?.includes("written"); i++) await Bun.sleep(25);
    // The watch disarms within milliseconds of the write; the person's git follows.
    const deadline = Date.now() + 3000;
    while (git(repo, "config", "core.fsmonitor").code === 0 && Date.now() < deadline) await Bun.sleep(20);
    git(repo, "status");
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(join(repo, ".git", "config"), "utf8")).toContain("# disarmed by agent-shell");
    const running = await s.call("task_output", { task_id: bg.task_id });
    expect(running.status).toBe("running");
    expect(running.git_disarmed?.[0]?.key).toBe("core.fsmonitor");
    await s.call("kill_shell", { task_id: bg.task_id });
  });

  test("a worktree made in one call works in the next and for the person", async () => {
    const repo = freshRepo("tree");
    const made = await s.call("bash", { command: "git worktree add -q ../tree-wt -b wt", working_directory: repo });
    expect(made.exit_code).toBe(0);
    const next = await s.call("bash", { command: "git status --short && git commit -q --allow-empty -m in-worktree && git log --oneline -1", working_directory: join(work, "tree-wt") });
    expect(next.exit_code).toBe(0);
    expect(next.stdout).toContain("in-worktree");
    expect(git(join(work, "tree-wt"), "status").code).toBe(0);
    expect(git(repo, "worktree", "list").out).toContain("tree-wt");
    expect(existsSync(join(repo, ".git", "worktrees", "tree-wt", "commondir"))).toBe(true);
  });

  test("Landlock level: a hook a command rewrote is put back with its mode, and the result says so", async () => {
    const repo = freshRepo("hooked");
    const hook = join(repo, ".git", "hooks", "pre-commit");
    writeFileSync(hook, "#!/bin/sh\necho person's hook\n");
    chmodSync(hook, 0o750);
    const r = await insist(landlock, { command: "printf '#!/bin/sh\\necho planted\\n' > .git/hooks/pre-commit; chmod 755 .git/hooks/pre-commit", working_directory: repo });
    expect(r.sandbox_level).toBe("landlock");
    expect(readFileSync(hook, "utf8")).toBe("#!/bin/sh\necho person's hook\n");
    expect(statSync(hook).mode & 0o777).toBe(0o750);
    expect(r.git_disarmed?.map((d: any) => d.key)).toContain("hooks/pre-commit");
  });
});
