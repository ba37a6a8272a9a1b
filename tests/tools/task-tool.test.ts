import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type McpSession, startServer } from "../helpers/mcp.ts";
import { uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

// Real processes and servers: more than bun's 5 s default.
setDefaultTimeout(60_000);

const AGENTS = resolve(import.meta.dir, "../fixtures/agents");
let bin: string;
let pathDirs = 0;

/** A PATH directory where each fake agent name links to a fixture. */
function pathWith(links: Record<string, string>): string {
  const dir = join(bin, String(++pathDirs));
  mkdirSync(dir, { recursive: true });
  for (const [name, fixture] of Object.entries(links)) symlinkSync(join(AGENTS, fixture), join(dir, name));
  return `${dir}:/usr/local/bin:/usr/bin:/bin`;
}

beforeAll(() => {
  bin = realpathSync(mkdtempSync(join(tmpdir(), "as-agents-")));
});
afterAll(() => rmSync(bin, { recursive: true, force: true }));

async function withServer(env: Record<string, string>, args: string[], fn: (s: McpSession) => Promise<void>) {
  const s = await startServer({ env, args });
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

describe("task: subagent from an argv template", () => {
  test("the prompt arrives byte-for-byte as one argument, never through a shell", async () => {
    const prompt = `it's "quoted" $(rm -rf ~) \`id\` $HOME \\ back\nnew line\t tab ünïcødé`;
    await withServer({ PATH: pathWith({ claude: "print-argv" }) }, [], async (s) => {
      const r = await s.call("task", { prompt });
      expect(r.status).toBe("completed");
      expect(r.exit_code).toBe(0);
      const seen = JSON.parse(r.stdout);
      expect(seen.name).toBe("claude");
      expect(seen.argv).toEqual(["-p", prompt]);
      expect(seen.cwd).toBe(s.cwd);
      expect(seen.stdin_isatty).toBe(false);
      expect(seen.stdin).toBe("");
    });
  });

  test("autodetect order: claude, then codex, then gemini, then clemini (with --cwd)", async () => {
    await withServer({ PATH: pathWith({ codex: "print-argv", gemini: "print-argv" }) }, [], async (s) => {
      const seen = JSON.parse((await s.call("task", { prompt: "hi" })).stdout);
      expect(seen.name).toBe("codex");
      expect(seen.argv).toEqual(["exec", "hi"]);
    });
    await withServer({ PATH: pathWith({ gemini: "print-argv", clemini: "print-argv" }) }, [], async (s) => {
      const seen = JSON.parse((await s.call("task", { prompt: "hi" })).stdout);
      expect(seen.name).toBe("gemini");
      expect(seen.argv).toEqual(["-p", "hi"]);
    });
    await withServer({ PATH: pathWith({ clemini: "print-argv" }) }, [], async (s) => {
      const seen = JSON.parse((await s.call("task", { prompt: "hi" })).stdout);
      expect(seen.name).toBe("clemini");
      expect(seen.argv).toEqual(["-p", "hi", "--cwd", s.cwd]);
    });
  });

  test("no agent on PATH and none configured → INVALID_ARGUMENT saying how to configure one", async () => {
    await withServer({ PATH: pathWith({}) }, [], async (s) => {
      const r = await s.call("task", { prompt: "hi" });
      expect(r.error_code).toBe("INVALID_ARGUMENT");
      expect(r.error).toContain("agent_command");
      expect(r.error).toContain("AGENT_SHELL_AGENT_COMMAND");
    });
  });

  test("--agent-command template with {prompt} and {cwd} inside arguments; env overrides added", async () => {
    const template = JSON.stringify([join(AGENTS, "print-argv"), "--task={prompt}", "dir:{cwd}"]);
    await withServer({}, ["--agent-command", template], async (s) => {
      const r = await s.call("task", { prompt: "a b", env: { AGENT_MARKER: "m1" } });
      const seen = JSON.parse(r.stdout);
      expect(seen.argv).toEqual(["--task=a b", `dir:${s.cwd}`]);
      expect(seen.env_marker).toBe("m1");
    });
  });

  test("a failing subagent → status failed with its exit code and stderr", async () => {
    await withServer({ PATH: pathWith({ claude: "failing-agent" }) }, [], async (s) => {
      const r = await s.call("task", { prompt: "fix it" });
      expect(r).toMatchObject({ status: "failed", exit_code: 3, stdout: "working on: fix it\n", stderr: "something went wrong\n" });
    });
  });

  test("background subagent: {task_id, status, prompt}, listed with kind task, readable with task_output", async () => {
    await withServer({ PATH: pathWith({ claude: "print-argv" }) }, [], async (s) => {
      const r = await s.call("task", { prompt: "bg work", background: true, description: "d" });
      expect(r).toEqual({ task_id: expect.stringMatching(/^bg-\d+$/), status: "running", prompt: "bg work" });
      const out = await s.call("task_output", { task_id: r.task_id, wait: true, timeout: 10 });
      expect(out).toMatchObject({ status: "completed", exit_code: 0, kind: "task", task_type: "background" });
      expect(JSON.parse(out.stdout).argv).toEqual(["-p", "bg work"]);
      const list = await s.call("task_list", {});
      expect(list.tasks[0]).toMatchObject({ task_id: r.task_id, kind: "task", prompt: "bg work", description: "d" });
    });
  });

  test("timeout kills the subagent and its grandchild (kill-on-drop of the whole tree)", async () => {
    const secs = uniqueSleep();
    await withServer({ PATH: pathWith({ claude: "sleepy-agent" }), SLEEPY_SECONDS: secs }, [], async (s) => {
      const r = await s.call("task", { prompt: "slow", timeout_seconds: 1 });
      expect(r.error_code).toBe("TIMEOUT");
      expect(await waitNoProcess(`sleep ${secs}`, 2000)).toEqual([]);
    });
  });

  test("kill_shell on a background subagent kills its whole tree", async () => {
    const secs = uniqueSleep();
    await withServer({ PATH: pathWith({ claude: "sleepy-agent" }), SLEEPY_SECONDS: secs }, [], async (s) => {
      const r = await s.call("task", { prompt: "slow", background: true });
      const k = await s.call("kill_shell", { task_id: r.task_id });
      expect(k).toEqual({ task_id: r.task_id, task_type: "background", status: "killed", success: true });
      expect(await waitNoProcess(`sleep ${secs}`, 500)).toEqual([]);
    });
  });

  test("MCP cancellation of a foreground subagent kills its tree", async () => {
    const secs = uniqueSleep();
    await withServer({ PATH: pathWith({ claude: "sleepy-agent" }), SLEEPY_SECONDS: secs }, [], async (s) => {
      const controller = new AbortController();
      const call = s.call("task", { prompt: "slow" }, { signal: controller.signal }).catch((e) => e);
      const { processesMatching } = await import("../helpers/procs.ts");
      while (processesMatching(`sleep ${secs}`).length < 2) await Bun.sleep(10);
      controller.abort();
      await call;
      expect(await waitNoProcess(`sleep ${secs}`, 3000)).toEqual([]);
    });
  });
});
