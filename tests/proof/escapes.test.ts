/**
 * SPEC §20: the ways around the sandbox that must not exist, each run for real through the
 * compiled binary over MCP. Every victim is a folder this file makes under /var/tmp (outside
 * /tmp and every writable root) and removes; the device test restores any mode it sees changed.
 * A model that confirms itself is simulated: asked, the test repeats the call with confirmed: true.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, alive, startServer, waitForExit, type McpSession } from "../helpers/mcp.ts";
import { runCli } from "../helpers/cli.ts";
import { processesMatching, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

let base: string; // everything this file makes
let victim: string; // outside every writable root
let home: string; // the server's HOME, with fake secrets
let work: string; // the server's cwd
let s: McpSession;
let landlock: McpSession;

/** A call as a model that confirms itself would make it. */
async function insist(server: McpSession, args: Record<string, unknown>): Promise<any> {
  const first = await server.call("bash", args);
  return first?.needs_confirmation ? server.call("bash", { ...args, confirmed: true }) : first;
}

const gcc = Bun.which("gcc");

/** One row of docs/proof.md (scripts/proof-table.ts): a family of escapes, how many were tried, what changed outside (0). */
function proof(family: string, tried: number, details = ""): void {
  console.log(`PROOF escape-${family}: tried=${tried} crashes=0 hangs=0 orphans=0 bytes_lost=0 changed_outside=0${details ? ` ${details}` : ""}`);
}

beforeAll(async () => {
  if (!gcc) throw new Error("these tests build an LD_PRELOAD library with gcc (apt-get install gcc)");
  mkdirSync("/var/tmp", { recursive: true });
  base = realpathSync(mkdtempSync("/var/tmp/as-escapes-"));
  victim = join(base, "victim");
  home = join(base, "home");
  work = join(base, "work");
  for (const d of [victim, home, work]) mkdirSync(d);
  s = await startServer({ cwd: work, env: { HOME: home, AS_TEST_API_KEY: "server-secret", AS_TEST_SESSION_TOKEN: "tok", AS_TEST_PLAIN: "plain" } });
  landlock = await startServer({ cwd: work, env: { HOME: home, AGENT_SHELL_SANDBOX_LEVEL: "landlock" } });
});

afterAll(async () => {
  await s?.close();
  await landlock?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("a call's env reaches only the command", () => {
  test("LD_PRELOAD: the constructor runs only inside (foreground, tty, background) and writes nothing outside", async () => {
    const lib = join(base, "evil.so");
    const src = join(base, "evil.c");
    writeFileSync(src, `#include <stdio.h>\n__attribute__((constructor)) static void init(void) { FILE *f = fopen("${victim}/preloaded", "a"); if (f) { fputs("x", f); fclose(f); } }\n`);
    const built = Bun.spawnSync([gcc!, "-shared", "-fPIC", "-o", lib, src], { stderr: "pipe" });
    expect(built.exitCode).toBe(0);
    const fg = await s.call("bash", { command: "echo fg", env: { LD_PRELOAD: lib } });
    expect(fg.stdout).toBe("fg\n");
    const tty = await s.call("bash", { command: "echo tty", tty: true, env: { LD_PRELOAD: lib } });
    expect(tty.stdout).toContain("tty");
    const bg = await s.call("bash", { command: "echo bg", run_in_background: true, env: { LD_PRELOAD: lib } });
    const out = await s.call("task_output", { task_id: bg.task_id, wait: true });
    expect(out.stdout).toBe("bg\n");
    // The library did load inside (it is the command's): its write outside was denied.
    const inside = await s.call("bash", { command: `cat /proc/self/environ | tr '\\0' '\\n' | grep -c '^LD_PRELOAD='`, env: { LD_PRELOAD: lib } });
    expect(inside.stdout.trim()).toBe("1");
    expect(existsSync(join(victim, "preloaded"))).toBe(false);
    proof("env-loader", 3, "paths=foreground,tty,background");
  });

  test("Landlock level: BUN_BE_BUN and LD_PRELOAD do not turn the launcher into anything else", async () => {
    // A file named like the launcher's mode in the working directory: Bun's CLI would run it.
    writeFileSync(join(work, "__sandbox-exec"), `require("fs").writeFileSync(${JSON.stringify(join(victim, "bun-ran"))}, "x")`);
    const r = await landlock.call("bash", { command: "echo ok", env: { BUN_BE_BUN: "1", NODE_OPTIONS: "--require /nonexistent" } });
    expect(r.stdout).toBe("ok\n");
    expect(r.sandbox_level).toBe("landlock");
    expect(existsSync(join(victim, "bun-ran"))).toBe(false);
    rmSync(join(work, "__sandbox-exec"));
    proof("env-launcher-landlock", 1);
  });

  test("the server's *_KEY / *_TOKEN variables are not inherited unless the call gives them", async () => {
    const r = await s.call("bash", { command: "env" });
    expect(r.stdout).not.toContain("AS_TEST_API_KEY");
    expect(r.stdout).not.toContain("AS_TEST_SESSION_TOKEN");
    expect(r.stdout).toContain("AS_TEST_PLAIN=plain");
    const given = await s.call("bash", { command: "echo $AS_TEST_API_KEY", env: { AS_TEST_API_KEY: "mine" } });
    expect(given.stdout).toBe("mine\n");
    // A person's own `run` is not a server's child: it keeps the person's variables.
    const person = await runCli(["run", "--", "echo $AS_TEST_API_KEY"], { cwd: work, env: { HOME: home, AS_TEST_API_KEY: "person" } });
    expect(person.stdout).toBe("person\n");
    proof("env-secrets", 2, "hidden=AS_TEST_API_KEY,AS_TEST_SESSION_TOKEN");
  });
});

describe("device nodes and setuid files", () => {
  const DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

  test("chmod/chown of /dev/null, /dev/zero, … inside changes nothing on the host (workspace-write and read-only)", async () => {
    const before = DEVICES.map((d) => statSync(d));
    try {
      for (const sandbox of ["workspace-write", "read-only"]) {
        const r = await insist(s, { command: `for d in ${DEVICES.join(" ")} /dev/tty; do chmod 000 $d; chown 1:1 $d; python3 -c "import os; os.chmod('$d', 0o777)"; done; echo x > /dev/null && echo usable`, sandbox });
        expect(r.stdout).toBe("usable\n");
      }
      const after = DEVICES.map((d) => statSync(d));
      expect(after.map((st) => `${st.mode}:${st.uid}`)).toEqual(before.map((st) => `${st.mode}:${st.uid}`));
    } finally {
      DEVICES.forEach((d, i) => {
        if (statSync(d).mode !== before[i]!.mode) chmodSync(d, before[i]!.mode & 0o7777);
      });
    }
    proof("devices", 2 * 6 * 3, "modes=workspace-write,read-only nodes=6 ops=chmod,chown,os.chmod");
  });

  test("no setuid or setgid file can be made, at either level", async () => {
    for (const server of [s, landlock]) {
      const dir = join(work, `setid-${server === s ? "ns" : "ll"}`);
      await insist(server, {
        command: `mkdir -p ${dir} && cp /bin/true ${dir}/t && chmod u+s ${dir}/t; chmod g+s ${dir}/t; python3 -c "import os; os.open('${dir}/p', os.O_CREAT|os.O_WRONLY, 0o4755)"; install -m 4755 /bin/true ${dir}/i; true`,
      });
      for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o6000).toBe(0);
    }
    proof("setuid", 2 * 4, "levels=namespaces,landlock forms=chmod-u+s,chmod-g+s,open-04755,install-4755");
  });
});

describe("unix sockets outside are out of reach", () => {
  test("a real tmux server whose socket is in /tmp cannot be driven from inside (network on and off)", async () => {
    const socket = join("/tmp", `as-escape-tmux-${process.pid}`);
    const marker = join(victim, "tmux-ran");
    const start = Bun.spawnSync(["tmux", "-S", socket, "new-session", "-d", "-s", "victim", "sleep 60"], { stderr: "pipe" });
    expect(start.exitCode).toBe(0);
    try {
      for (const network of [true, false]) {
        const server = network ? s : await startServer({ cwd: work, env: { HOME: home, AGENT_SHELL_SANDBOX_NETWORK: "false" } });
        try {
          const r = await server.call("bash", { command: `tmux -S ${socket} run-shell 'touch ${marker}'; python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('${socket}')"` });
          expect(r.exit_code).not.toBe(0);
        } finally {
          if (!network) await server.close();
        }
      }
      expect(existsSync(marker)).toBe(false);
      // A socket pair between a command's own processes keeps working.
      const pair = await s.call("bash", { command: `python3 -c "import socket; a,b=socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())"` });
      expect(pair.stdout).toBe("ok\n");
    } finally {
      Bun.spawnSync(["tmux", "-S", socket, "kill-server"]);
      rmSync(socket, { force: true });
    }
    proof("unix-sockets", 4, "network=on,off clients=tmux,python");
  });
});

describe("a fork bomb is held", () => {
  test("3,000 background sleeps stay under max_processes and bash still answers", async () => {
    const tag = uniqueSleep(200);
    const bomb = await s.call("bash", { command: `for i in $(seq 3000); do sleep ${tag} & done; wait`, run_in_background: true });
    let most = 0;
    try {
      for (let i = 0; i < 60 && most < 1500; i++) {
        const r = await s.call("bash", { command: "echo alive" }); // answered while the bomb runs
        expect(r.stdout).toBe("alive\n");
        most = Math.max(most, processesMatching(tag).length);
        await Bun.sleep(250);
      }
      expect(most).toBeGreaterThan(100);
      expect(most).toBeLessThanOrEqual(2048);
    } finally {
      await s.call("kill_shell", { task_id: bomb.task_id });
    }
    expect(await waitNoProcess(tag, 5000)).toEqual([]);
    proof("fork-bomb", 3000, `most_alive=${most}`);
  });
});

describe("secrets", () => {
  const FILES = [
    ".config/gh/hosts.yml", ".npmrc", ".pypirc", ".cargo/credentials.toml", ".claude/.credentials.json", ".codex/auth.json",
    ".gemini/oauth_creds.json", ".terraform.d/credentials.tfrc.json", ".m2/settings.xml", ".vault-token", ".bash_history", ".zsh_history", ".aws/credentials",
  ];

  test("13 credential files are unreadable at both levels", async () => {
    for (const f of FILES) {
      mkdirSync(join(home, f, ".."), { recursive: true });
      writeFileSync(join(home, f), "SECRET\n");
    }
    for (const server of [s, landlock]) {
      const r = await server.call("bash", { command: `for f in ${FILES.map((f) => `~/${f}`).join(" ")}; do cat $f 2>/dev/null; done; true` });
      expect(r.stdout).not.toContain("SECRET");
    }
    const shadow = await s.call("bash", { command: "cat /etc/shadow 2>&1 | head -1" });
    expect(shadow.stdout).not.toMatch(/^root:/);
    proof("secrets", FILES.length * 2 + 1, "levels=namespaces,landlock +/etc/shadow");
  });

  test("a ~/.aws replaced outside while the server runs stays unreadable on three later calls", async () => {
    for (let i = 0; i < 3; i++) {
      rmSync(join(home, ".aws"), { recursive: true, force: true });
      mkdirSync(join(home, ".aws"));
      writeFileSync(join(home, ".aws", "credentials"), `NEW-SECRET-${i}\n`);
      const r = await s.call("bash", { command: "cat ~/.aws/credentials 2>&1; true" });
      expect(r.stdout).not.toContain("NEW-SECRET");
    }
    proof("stale-secret", 3);
  });
});

describe("git runs nothing a sandboxed command wrote", () => {
  /** A repository in `dir`, and whether a person's `git status` there later runs what the attack planted. */
  function repo(dir: string): void {
    mkdirSync(dir, { recursive: true });
    Bun.spawnSync(["git", "init", "-q", dir]);
  }
  function personRunsGit(dir: string): boolean {
    const ran = join(victim, "git-ran");
    rmSync(ran, { force: true });
    Bun.spawnSync(["git", "-C", dir, "status"], { stdout: "ignore", stderr: "ignore", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
    Bun.spawnSync(["git", "-C", dir, "commit", "-q", "--allow-empty", "-m", "x"], { stdout: "ignore", stderr: "ignore", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
    return existsSync(ran);
  }
  const plant = (gitDir: string) =>
    `printf '#!/bin/sh\\ntouch ${victim}/git-ran\\n' > ${gitDir}/hooks/pre-commit; chmod +x ${gitDir}/hooks/pre-commit; git config -f ${gitDir}/config core.fsmonitor 'touch ${victim}/git-ran; false'`;

  test("hooks of the workspace's repository are read-only, and what its config would run is disarmed", async () => {
    repo(work);
    await insist(s, { command: `${plant(".git")}; true` });
    expect(personRunsGit(work)).toBe(false);
  });

  test(".git moved aside and made anew", async () => {
    repo(work);
    await insist(s, { command: `mv .git .git-old && mkdir -p .git && cp -r .git-old/. .git/ && ${plant(".git")}; true` });
    expect(personRunsGit(work)).toBe(false);
    rmSync(join(work, ".git-old"), { recursive: true, force: true });
  });

  test("a .git/commondir pointing at a planted copy", async () => {
    repo(work);
    await insist(s, { command: `cp -r .git ${join(base, "work", "copy")} 2>/dev/null || cp -r .git copy; ${plant("copy")}; echo "$PWD/copy" > .git/commondir; true` });
    expect(personRunsGit(work)).toBe(false);
    rmSync(join(work, "copy"), { recursive: true, force: true });
  });

  test("a repository made after the server started (git init in a subfolder), and one at the Landlock level", async () => {
    await insist(s, { command: `git init -q newrepo && cd newrepo && ${plant(".git")}` });
    expect(personRunsGit(join(work, "newrepo"))).toBe(false);
    await insist(landlock, { command: `git init -q llrepo && cd llrepo && ${plant(".git")}` });
    expect(personRunsGit(join(work, "llrepo"))).toBe(false);
  });

  test("hooks of repositories made by 40 commands started at once lose their execute bits: the state each is compared with is taken before it can run", async () => {
    // A burst keeps the server busy while the first commands already run: a look at git's
    // files taken once a command had started would count what it planted as there before.
    const dirs = Array.from({ length: 40 }, (_, i) => `burst${i}`);
    const hook = (d: string) => join(work, d, ".git", "hooks", "pre-commit");
    const started = await Promise.all(
      dirs.map((d) => insist(s, { command: `mkdir -p ${d}/.git/hooks && printf '#!/bin/sh\\n' > ${d}/.git/hooks/pre-commit && chmod +x ${d}/.git/hooks/pre-commit`, run_in_background: true })),
    );
    await s.call("task_output", { task_ids: started.map((t) => t.task_id), wait: true, timeout: 60 });
    const executable = dirs.filter((d) => existsSync(hook(d)) && (statSync(hook(d)).mode & 0o111) !== 0);
    const planted = dirs.filter((d) => existsSync(hook(d)));
    for (const d of dirs) rmSync(join(work, d), { recursive: true, force: true });
    expect(planted.length).toBe(40);
    expect(executable).toEqual([]);
  });

  test(".git/config replaced by a person's `git config` outside is still guarded in earlier-built sandboxes", async () => {
    repo(work);
    await s.call("bash", { command: "true" }); // sandboxes built and kept
    Bun.spawnSync(["git", "-C", work, "config", "user.name", "person"]); // replaces .git/config (lock file + rename)
    await insist(s, { command: `git config -f .git/config core.fsmonitor 'touch ${victim}/git-ran; false'; true` });
    expect(personRunsGit(work)).toBe(false);
    proof("git", 45, "forms=read-only,moved,commondir,new-repo(+landlock),new-repos-in-a-burst(40),replaced-config");
  });
});

describe("the server acts on nothing a command planted (SPEC §26)", () => {
  /** Victim files outside every root, with the mode and content they must keep. */
  function victims(): { file: string; setuid: string; folder: string; tool: string } {
    const dir = join(victim, `links-${Math.random().toString(36).slice(2)}`);
    mkdirSync(dir);
    const file = join(dir, "shadow");
    writeFileSync(file, "secret\n", { mode: 0o640 });
    chmodSync(file, 0o640);
    const setuid = join(dir, "setuid-tool");
    writeFileSync(setuid, "#!/bin/sh\n", { mode: 0o755 });
    chmodSync(setuid, 0o4755);
    const folder = join(dir, "bin");
    mkdirSync(folder);
    const tool = join(folder, "tool");
    writeFileSync(tool, "#!/bin/sh\n");
    chmodSync(tool, 0o755);
    return { file, setuid, folder, tool };
  }
  const modeOf = (p: string) => statSync(p).mode & 0o7777;

  test("links in a new repository's .git/hooks to a file and a setuid file, .git/hooks as a link to a folder, .git/config as a link: every target keeps its mode and content", async () => {
    const v = victims();
    await insist(s, { command: `mkdir -p l1/.git/hooks && ln -s ${v.file} l1/.git/hooks/pre-commit && ln -s ${v.setuid} l1/.git/hooks/post-commit` });
    await insist(s, { command: `mkdir -p l2/.git && ln -s ${v.folder} l2/.git/hooks && echo '[core]' > l2/x` });
    await insist(s, { command: `mkdir -p l3/.git/hooks && ln -s ${v.file} l3/.git/config && echo 'ref: refs/heads/main' > l3/.git/HEAD` });
    await insist(landlock, { command: `mkdir -p l4/.git/hooks && ln -s ${v.file} l4/.git/hooks/pre-push && ln -s ${v.file} l4/.git/config` });
    expect(modeOf(v.file)).toBe(0o640);
    expect(readFileSync(v.file, "utf8")).toBe("secret\n");
    expect(modeOf(v.setuid)).toBe(0o4755);
    expect(modeOf(v.tool)).toBe(0o755);
    expect(modeOf(v.folder)).toBe(0o755);
    // The links themselves went: git would have followed them.
    for (const link of ["l1/.git/hooks/pre-commit", "l1/.git/hooks/post-commit", "l2/.git/hooks", "l3/.git/config", "l4/.git/hooks/pre-push", "l4/.git/config"]) {
      expect(existsSync(join(work, link)) || (() => { try { return lstatSync(join(work, link)).isSymbolicLink(); } catch { return false; } })()).toBe(false);
    }
    for (const d of ["l1", "l2", "l3", "l4"]) rmSync(join(work, d), { recursive: true, force: true });
    proof("planted-links", 7, "forms=hook->file,hook->setuid,hooks->folder,config->file(+landlock)");
  });

  test("with the home as the working directory, a command changes neither agent-shell's config, ~/.claude/settings.json, ~/.bashrc nor a ~/.bash_profile it makes, and the next server is still sandboxed; at the Landlock level what it changed is put back", async () => {
    const homeRoot = join(base, "home-root");
    mkdirSync(join(homeRoot, ".claude"), { recursive: true });
    writeFileSync(join(homeRoot, ".bashrc"), "# person's\n", { mode: 0o644 });
    chmodSync(join(homeRoot, ".bashrc"), 0o644);
    writeFileSync(join(homeRoot, ".claude", "settings.json"), "{}\n");
    const env = { HOME: homeRoot, XDG_CONFIG_HOME: "" };
    const inHome = await startServer({ cwd: homeRoot, env });
    try {
      const r = await insist(inHome, {
        command: `mkdir -p .config/agent-shell; printf 'sandbox = "off"\n' > .config/agent-shell/config.toml; echo '{"hooks":{"SessionStart":[]}}' > .claude/settings.json; echo 'touch ${victim}/rc-ran' >> .bashrc; true`,
      });
      expect(r.sandbox).toBe("workspace-write");
      expect(existsSync(join(homeRoot, ".config", "agent-shell", "config.toml"))).toBe(false);
      expect(readFileSync(join(homeRoot, ".claude", "settings.json"), "utf8")).toBe("{}\n");
      expect(readFileSync(join(homeRoot, ".bashrc"), "utf8")).toBe("# person's\n");
      const ordinary = await inHome.call("bash", { command: "echo work > notes.txt && cat notes.txt" });
      expect(ordinary.stdout).toBe("work\n");
    } finally {
      await inHome.close();
    }
    const next = await startServer({ cwd: homeRoot, env });
    try {
      expect((await next.call("bash", { command: "true" })).sandbox).toBe("workspace-write");
    } finally {
      await next.close();
    }
    const ll = await startServer({ cwd: homeRoot, env: { ...env, AGENT_SHELL_SANDBOX_LEVEL: "landlock" } });
    try {
      const r = await insist(ll, { command: "echo planted >> .bashrc; chmod 777 .bashrc; echo '{}x' > .claude/settings.json; echo x > .zshrc" });
      expect(r.sandbox_level).toBe("landlock");
      expect(readFileSync(join(homeRoot, ".bashrc"), "utf8")).toBe("# person's\n");
      expect(statSync(join(homeRoot, ".bashrc")).mode & 0o777).toBe(0o644);
      expect(readFileSync(join(homeRoot, ".claude", "settings.json"), "utf8")).toBe("{}\n");
      expect(existsSync(join(homeRoot, ".zshrc"))).toBe(false);
      expect(r.control_files_restored?.length).toBe(3);
    } finally {
      await ll.close();
    }
    rmSync(homeRoot, { recursive: true, force: true });
    proof("control-files", 8, "files=config.toml,claude-settings,bashrc,new-bash_profile(+landlock:put-back)");
  });

  test("a SysV message queue made outside cannot be removed or seen from inside (namespaces level)", async () => {
    const made = Bun.spawnSync(["ipcmk", "-Q"], { stdout: "pipe" });
    expect(made.exitCode).toBe(0);
    const id = /(\d+)\s*$/.exec(made.stdout.toString().trim())![1]!;
    try {
      const r = await s.call("bash", { command: `ipcrm -q ${id}; ipcs -q | grep -c '^0x' || true` });
      expect(r.sandbox_level).toBe("namespaces");
      expect(r.stdout.trim()).toBe("0");
      expect(Bun.spawnSync(["ipcs", "-q", "-i", id]).exitCode).toBe(0); // still there outside
    } finally {
      Bun.spawnSync(["ipcrm", "-q", id]);
    }
    proof("sysv-ipc", 1, "forms=msgqueue");
  });

  test("a hook and core.fsmonitor in a repository two levels below the root do not run when the person runs git there", async () => {
    mkdirSync(join(work, "sub"), { recursive: true });
    Bun.spawnSync(["git", "init", "-q", join(work, "sub", "inner")]);
    await s.call("bash", { command: "true" }); // the nested repository is in the next sandbox's walk
    const ran = join(victim, "git-ran");
    rmSync(ran, { force: true });
    const planted = `printf '#!/bin/sh\\ntouch ${ran}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; git config core.fsmonitor 'touch ${ran}; false'; true`;
    await insist(s, { command: planted, working_directory: join(work, "sub", "inner") });
    await insist(s, { command: `git init -q deep/a/b && cd deep/a/b && ${planted}` });
    for (const dir of [join(work, "sub", "inner"), join(work, "deep", "a", "b")]) {
      Bun.spawnSync(["git", "-C", dir, "status"], { stdout: "ignore", stderr: "ignore" });
      Bun.spawnSync(["git", "-C", dir, "commit", "-q", "--allow-empty", "-m", "x"], { stdout: "ignore", stderr: "ignore", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
    }
    expect(existsSync(ran)).toBe(false);
    rmSync(join(work, "sub"), { recursive: true, force: true });
    rmSync(join(work, "deep"), { recursive: true, force: true });
    proof("nested-repository", 4, "depth=2,3 forms=hook,fsmonitor");
  });
});

describe("task and the CLI", () => {
  test("task resolves its CLI on the server's PATH: a fake `claude` on the call's PATH never runs", async () => {
    const bin = join(base, "fakebin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), `#!/bin/sh\ntouch ${victim}/fake-claude\n`, { mode: 0o755 });
    const r = await s.call("task", { prompt: "hi", env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(r.error_code ?? "no-cli").toBeDefined();
    expect(existsSync(join(victim, "fake-claude"))).toBe(false);
  });

  test("a subagent's settings file stays read-only for it", async () => {
    mkdirSync(join(home, ".claude"), { recursive: true });
    const server = await startServer({ cwd: work, env: { HOME: home }, args: ["--agent-command", JSON.stringify(["bash", "-c", "echo '{\"hooks\":1}' > ~/.claude/settings.json; echo note > ~/.claude/notes.txt", "{prompt}"])] });
    try {
      await server.call("task", { prompt: "x" });
      expect(readFileSync(join(home, ".claude", "settings.json"), "utf8")).not.toContain("hooks");
      expect(readFileSync(join(home, ".claude", "notes.txt"), "utf8")).toBe("note\n"); // its state dir stays writable
    } finally {
      await server.close();
    }
  });

  test("the CLI's call does not run a caution command on the JSON's confirmed: true without --yes", async () => {
    const file = join(work, "keep-me");
    writeFileSync(file, "x");
    const r = await runCli(["call", "bash", JSON.stringify({ command: `rm ${file}`, confirmed: true })], { cwd: work, env: { HOME: home } });
    expect(r.code).toBe(1);
    expect(existsSync(file)).toBe(true);
    const yes = await runCli(["call", "--yes", "bash", JSON.stringify({ command: `rm ${file}` })], { cwd: work, env: { HOME: home } });
    expect(yes.code).toBe(0);
    expect(existsSync(file)).toBe(false);
    proof("task-and-cli", 3, "fake_claude=0 settings_written=0 call_without_yes_ran=0");
  });
});

describe("agent-shell's own daemons and the terminal", () => {
  test("a daemon whose state dir is under /tmp: its token is unreadable and its socket unreachable from inside", async () => {
    const stateDir = realpathSync(mkdtempSync("/tmp/as-escape-daemon-"));
    try {
      const started = await runCli(["start", "--state-dir", stateDir, "--", "sleep 30"], { cwd: work, env: { HOME: home } });
      expect(started.code).toBe(0);
      expect(existsSync(join(stateDir, "daemon.sock"))).toBe(true);
      const r = await insist(s, {
        command: `cat ${home}/.local/state/agent-shell/daemon-tokens/*.token ${stateDir}/*.token 2>&1; python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('${stateDir}/daemon.sock'); print('CONNECTED')" 2>&1; ${BINARY} call --state-dir ${stateDir} bash '{"command":"touch ${victim}/daemon-ran","run_in_background":true,"sandbox":"off"}' 2>&1; true`,
      });
      expect(r.stdout).not.toContain("CONNECTED");
      expect(r.stdout).not.toMatch(/^[0-9a-f]{64}$/m);
      await Bun.sleep(200);
      expect(existsSync(join(victim, "daemon-ran"))).toBe(false);
      proof("daemon-token", 3, "token_read=0 connected=0 ran_outside=0");
    } finally {
      await runCli(["daemon", "stop", "--state-dir", stateDir], { cwd: work, env: { HOME: home } });
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  test("TIOCSTI into a terminal and sethostname are refused at both levels", async () => {
    const before = Bun.spawnSync(["hostname"]).stdout.toString();
    for (const server of [s, landlock]) {
      const r = await server.call("bash", {
        command: `python3 -c "import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x')" 2>&1 | tail -1; hostname agent-shell-pwned 2>&1; python3 -c "import socket; socket.sethostname('agent-shell-pwned')" 2>&1 | tail -1; true`,
        tty: true,
      });
      // TIOCSTI and sethostname(2) both fail with EPERM (hostname(1) words it its own way).
      expect(r.stdout.split("Operation not permitted").length - 1).toBeGreaterThanOrEqual(2);
    }
    expect(Bun.spawnSync(["hostname"]).stdout.toString()).toBe(before);
    proof("terminal-and-hostname", 6, "levels=namespaces,landlock");
  });
});

describe("survivors of a double SIGKILL", () => {
  test("tasks that outlive a SIGKILL of the server and its watchdog are ended by the next start", async () => {
    const tag = uniqueSleep(300);
    const server = await startServer({ cwd: work, env: { HOME: home } });
    const watchdogs = () => Bun.spawnSync(["pgrep", "-P", String(server.pid)], { stdout: "pipe" }).stdout.toString().split("\n").filter(Boolean).map(Number);
    for (const sandbox of ["workspace-write", "off"]) {
      const args = { command: `sleep ${tag} & sleep ${tag}; wait`, run_in_background: true, sandbox };
      const r = await server.call("bash", args);
      if (r.needs_confirmation) await server.call("bash", { ...args, confirmed: true });
    }
    for (let i = 0; i < 100 && processesMatching(tag).length < 4; i++) await Bun.sleep(20);
    expect(processesMatching(tag).length).toBeGreaterThanOrEqual(4);
    for (const pid of [...watchdogs(), server.pid]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    await waitForExit(server.pid, 3000);
    await server.close().catch(() => {});
    const next = await startServer({ cwd: work, env: { HOME: home } });
    try {
      expect(await waitNoProcess(tag, 5000)).toEqual([]);
    } finally {
      await next.close();
    }
    expect(alive(server.pid)).toBe(false);
    proof("double-sigkill", 4, "survivors_after_next_start=0");
  });
});

describe("what the Landlock level cannot hold is said", () => {
  test("in sandbox check, in the instructions and on the connection's first result (SPEC §25: once per connection)", async () => {
    const fresh = await startServer({ cwd: work, env: { HOME: home, AGENT_SHELL_SANDBOX_LEVEL: "landlock" } });
    try {
      expect(fresh.client.getInstructions()).toContain("chmod");
      const r = await fresh.call("bash", { command: "true" });
      expect(r.sandbox_level).toBe("landlock");
      expect(r.sandbox_notes.join("\n")).toContain("chmod");
      expect((await fresh.call("bash", { command: "true" })).sandbox_notes).toBeUndefined();
    } finally {
      await fresh.close();
    }
    const check = await runCli(["sandbox", "check", "--json"], { cwd: work, env: { HOME: home, AGENT_SHELL_SANDBOX_LEVEL: "landlock" } });
    expect(JSON.parse(check.stdout).not_held.join("\n")).toContain("chmod");
    const ns = await s.call("bash", { command: "true" });
    expect(ns.sandbox_notes).toBeUndefined();
  });
});

describe("the network goes only through the proxy (SPEC §21)", () => {
  test("raw TCP and UDP to the host's loopback and a routable address, the proxy asked for an IP literal (HTTP and SOCKS5), a name nobody allowed, the proxy's own sockets: nothing arrives", async () => {
    const { createServer } = await import("node:net");
    const { createSocket } = await import("node:dgram");
    const routable = Object.values((await import("node:os")).networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    let arrived = 0;
    const listeners: Array<{ close(): void }> = [];
    const listen = async (host: string) => {
      const tcp = createServer((c) => (arrived++, c.destroy()));
      await new Promise<void>((done) => tcp.listen(0, host, done));
      const udp = createSocket("udp4").on("message", () => arrived++);
      await new Promise<void>((done) => udp.bind(0, host, done));
      listeners.push(tcp, udp);
      return { tcp: (tcp.address() as { port: number }).port, udp: udp.address().port };
    };
    try {
      const lo = await listen("127.0.0.1");
      const out = routable ? await listen(routable) : null;
      const udp = (host: string, port: number) => `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('${host}', ${port}))"`;
      const attempts = [
        `(exec 3<>/dev/tcp/127.0.0.1/${lo.tcp}) && echo REACHED`,
        udp("127.0.0.1", lo.udp),
        `curl -sS --max-time 3 --noproxy '*' http://localhost:${lo.tcp}/ && echo REACHED`,
        `curl -sS --max-time 3 --noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:${lo.tcp}/`,
        `curl -sS --max-time 3 --noproxy '' -x "$HTTP_PROXY" -p http://127.0.0.1:${lo.tcp}/`,
        `curl -sS --max-time 3 --socks5 127.0.0.1:3128 http://127.0.0.1:${lo.tcp}/`,
        `curl -sS --max-time 3 --noproxy '' -x "$HTTP_PROXY" http://not-allowed.invalid:${lo.tcp}/`,
        `ls ${join(s.stateDir, "net")} && echo LISTED`,
        ...(out ? [`(exec 3<>/dev/tcp/${routable}/${out.tcp}) && echo REACHED`, udp(routable!, out.udp)] : []),
      ];
      for (const command of attempts) {
        const r = await insist(s, { command: `timeout 5 bash -c ${JSON.stringify(command)}` });
        expect(r.stdout).not.toContain("REACHED");
        expect(r.stdout).not.toContain("LISTED");
      }
      const ll = await landlock.call("bash", { command: `timeout 5 bash -c ${JSON.stringify(attempts[0])}` });
      expect(ll.stdout).not.toContain("REACHED");
      await Bun.sleep(200); // a datagram in flight would have arrived (none may)
      expect(arrived).toBe(0);
      proof("network", attempts.length + 1, "paths=tcp,udp,noproxy,ip-literal-http,ip-literal-connect,ip-literal-socks,unknown-name,proxy-sockets,landlock-tcp");
    } finally {
      for (const l of listeners) l.close();
    }
  });
});
