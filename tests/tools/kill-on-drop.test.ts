/**
 * SPEC §3.1 kill-on-drop and non-interactive children: a foreground child never outlives its
 * call (timeout, MCP cancellation, the server shutting down), what a foreground call leaves
 * running is a task of its own (SPEC §25), and a program prompting on /dev/tty fails at once.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { alive, startServer, type McpSession } from "../helpers/mcp.ts";
import { processesMatching, uniqueSleep, waitNoProcess } from "../helpers/procs.ts";
import { spawnRaw, toolResult, type RawServer } from "../helpers/raw-mcp.ts";

// Real processes on a shared 2-core machine: bun's 5 s default is too tight under load.
setDefaultTimeout(30_000);

let s: McpSession;

beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
});

/** Waits (polling ps, a state query) until a process matching `marker` exists. */
async function appears(marker: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (processesMatching(marker).length === 0) {
    if (Date.now() > deadline) throw new Error(`no process matching '${marker}' appeared`);
    await Bun.sleep(20);
  }
}

/** Resolves with the ms it took `pid` to exit; throws after `ms`. */
/** Resolves once the server process is gone (a server that never exits fails the test by its timeout). */
async function exited(pid: number): Promise<void> {
  while (alive(pid)) await Bun.sleep(10);
}

describe("foreground timeout", () => {
  test("a timeout kills the whole process group, grandchildren included", async () => {
    const marker = uniqueSleep(300);
    const r = await s.call("bash", { command: `sleep ${marker} & bash -c 'sleep ${marker}'; wait`, timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(processesMatching(`sleep ${marker}`)).toEqual([]);
  });

  test("a child that ignores SIGTERM is SIGKILLed after the grace period, and the call still returns", async () => {
    const marker = uniqueSleep(300);
    const r = await s.call("bash", { command: `trap '' TERM; sleep ${marker}; sleep ${marker}`, timeout_seconds: 1 });
    expect(r.error_code).toBe("TIMEOUT");
    expect(processesMatching(`sleep ${marker}`)).toEqual([]);
  });

  test("a timeout also waits out a grandchild that ignores SIGTERM", async () => {
    const marker = uniqueSleep(300);
    const r = await s.call("bash", {
      command: `bash -c "trap '' TERM; sleep ${marker}; sleep ${marker}" & sleep ${marker}; wait`,
      timeout_seconds: 1,
    });
    expect(r.error_code).toBe("TIMEOUT");
    expect(processesMatching(`sleep ${marker}`)).toEqual([]);
  });
});

describe("MCP cancellation", () => {
  test("cancelling the request (AbortSignal → notifications/cancelled) kills the foreground child's group", async () => {
    const marker = uniqueSleep(300);
    const controller = new AbortController();
    const call = s.call("bash", { command: `sleep ${marker} & sleep ${marker}; wait` }, { signal: controller.signal });
    const settled = call.then(
      () => "resolved",
      () => "rejected",
    );
    await appears(`sleep ${marker}`);
    controller.abort();
    expect(await settled).toBe("rejected");
    expect(await waitNoProcess(`sleep ${marker}`, 3000)).toEqual([]);
    // The server carries on.
    expect((await s.call("bash", { command: "echo after" })).stdout).toBe("after\n");
  });

  test("cancelling a task_output wait leaves the background task running", async () => {
    const marker = uniqueSleep(300);
    const { task_id } = await s.call("bash", { command: `sleep ${marker}`, run_in_background: true });
    await appears(`sleep ${marker}`);
    const controller = new AbortController();
    const waiting = s.call("task_output", { task_id, wait: true, timeout: 60 }, { signal: controller.signal }).catch(() => "rejected");
    controller.abort();
    expect(await waiting).toBe("rejected");
    expect((await s.call("task_output", { task_id })).status).toBe("running");
    expect(processesMatching(`sleep ${marker}`).length).toBe(1);
    await s.call("kill_shell", { task_id });
  });
});

describe("server shutdown", () => {
  /** A raw server running a background sleep and a foreground sleep call. */
  async function busyServer(): Promise<{ raw: RawServer; bgMarker: string; fgMarker: string }> {
    const raw = await spawnRaw();
    const bgMarker = uniqueSleep(300);
    const fgMarker = uniqueSleep(300);
    const started = toolResult(
      await raw.request("tools/call", { name: "bash", arguments: { command: `sleep ${bgMarker}`, run_in_background: true } }),
    );
    expect(started.status).toBe("running");
    raw.send("tools/call", { name: "bash", arguments: { command: `sleep ${fgMarker}` } });
    await appears(`sleep ${bgMarker}`);
    await appears(`sleep ${fgMarker}`);
    return { raw, bgMarker, fgMarker };
  }

  test("closing stdin with a running background sleep and a foreground call: the server exits, neither sleep survives", async () => {
    const { raw, bgMarker, fgMarker } = await busyServer();
    try {
      raw.endStdin();
      await exited(raw.pid);
      expect(processesMatching(`sleep ${bgMarker}`)).toEqual([]);
      expect(processesMatching(`sleep ${fgMarker}`)).toEqual([]);
    } finally {
      await raw.dispose();
    }
  });

  test("SIGTERM to the server: it exits, every task's group terminated", async () => {
    const { raw, bgMarker, fgMarker } = await busyServer();
    try {
      process.kill(raw.pid, "SIGTERM");
      await exited(raw.pid);
      expect(processesMatching(`sleep ${bgMarker}`)).toEqual([]);
      expect(processesMatching(`sleep ${fgMarker}`)).toEqual([]);
    } finally {
      await raw.dispose();
    }
  });

  test("SIGINT to the server: it exits, every task's group terminated", async () => {
    const { raw, bgMarker, fgMarker } = await busyServer();
    try {
      process.kill(raw.pid, "SIGINT");
      await exited(raw.pid);
      expect(processesMatching(`sleep ${bgMarker}`)).toEqual([]);
      expect(processesMatching(`sleep ${fgMarker}`)).toEqual([]);
    } finally {
      await raw.dispose();
    }
  });

  test("shutdown also kills children that ignore SIGTERM", async () => {
    const raw = await spawnRaw();
    const marker = uniqueSleep(300);
    try {
      await raw.request("tools/call", {
        name: "bash",
        arguments: { command: `trap '' TERM; sleep ${marker}; sleep ${marker}`, run_in_background: true },
      });
      await appears(`sleep ${marker}`);
      raw.endStdin();
      await exited(raw.pid);
      expect(processesMatching(`sleep ${marker}`)).toEqual([]);
    } finally {
      await raw.dispose();
    }
  });

  test("a call before `notifications/initialized` is watched too: SIGKILL of the server still ends its task", async () => {
    // The server makes its watchdog once the client says it is initialized (initialize is
    // answered sooner); a client that calls at once must not get an unwatched task.
    const raw = await spawnRaw([], { initialized: false });
    const marker = uniqueSleep(300);
    try {
      const r = toolResult(await raw.request("tools/call", { name: "bash", arguments: { command: `sleep ${marker}`, run_in_background: true } }));
      expect(r.status).toBe("running");
      await appears(`sleep ${marker}`);
      process.kill(raw.pid, "SIGKILL");
      expect(await waitNoProcess(`sleep ${marker}`, 2500)).toEqual([]);
    } finally {
      await raw.dispose();
    }
  });

  test("SIGKILL of the server: every group it started is gone within 2 s", async () => {
    const { raw, bgMarker, fgMarker } = await busyServer();
    try {
      process.kill(raw.pid, "SIGKILL");
      expect(await waitNoProcess(`sleep ${bgMarker}`, 2500)).toEqual([]);
      expect(await waitNoProcess(`sleep ${fgMarker}`, 500)).toEqual([]);
    } finally {
      await raw.dispose();
    }
  });
});

describe("a foreground call returns at its command's exit; what it left running is a task, never left on its own (SPEC §25)", () => {
  /** Ends the task a call's leftovers became, and checks that none of `marker` is left. */
  async function endLeftovers(r: any, marker: string): Promise<void> {
    expect(r.left_running.commands.join("\n")).toContain(marker);
    expect((await s.call("kill_shell", { task_id: r.left_running.task_id })).status).toBe("killed");
    expect(processesMatching(marker)).toEqual([]);
  }

  test("`sleep 300 & echo started` returns 'started' at its exit (long before the sleep's); the sleep is a task, ended with it", async () => {
    const marker = uniqueSleep(300);
    const r = await s.call("bash", { command: `sleep ${marker} & echo started` });
    expect(r.stdout).toBe("started\n");
    expect(r.exit_code).toBe(0);
    await endLeftovers(r, `sleep ${marker}`);
  });

  test("the same through `bash -c '…'` (the form a model writes)", async () => {
    const marker = uniqueSleep(300);
    const r = await s.call("bash", { command: `bash -c 'sleep ${marker} & echo started'` });
    expect(r.stdout).toBe("started\n");
    await endLeftovers(r, `sleep ${marker}`);
  });

  test("a leftover holding only stderr open does not hold the call either", async () => {
    const marker = uniqueSleep(300);
    const r = await s.call("bash", { command: `(sleep ${marker} >/dev/null &); echo out` });
    expect(r.stdout).toBe("out\n");
    await endLeftovers(r, `sleep ${marker}`);
  });

  test("with foreground_leftovers = kill, a leftover (its output redirected away too) is terminated", async () => {
    const k = await startServer({ env: { AGENT_SHELL_FOREGROUND_LEFTOVERS: "kill" } });
    try {
      const marker = uniqueSleep(300);
      const r = await k.call("bash", { command: `sleep ${marker} >/dev/null 2>&1 & echo done` });
      expect(r.stdout).toBe("done\n");
      expect(r.left_running_killed.pids).toHaveLength(1);
      expect(await waitNoProcess(`sleep ${marker}`, 3000)).toEqual([]);
    } finally {
      await k.close();
    }
  });
});

describe("no controlling terminal", () => {
  test("`read -r x < /dev/tty && echo got` fails at once: non-zero exit, no 'got'", async () => {
    const r = await s.call("bash", { command: "read -r x < /dev/tty && echo got", timeout_seconds: 30 });
    expect(r.error).toBeUndefined(); // not a TIMEOUT: it did not wait for input
    expect(r.exit_code).not.toBe(0);
    expect(r.stdout).not.toContain("got");
  });

  test("in the background too, reading /dev/tty fails at once", async () => {
    const { task_id } = await s.call("bash", { command: "read -r x < /dev/tty && echo got", run_in_background: true });
    const r = await s.call("task_output", { task_id, wait: true, timeout: 10 });
    expect(r.status).toBe("completed");
    expect(r.exit_code).not.toBe(0);
    expect(r.stdout).not.toContain("got");
  });

  test("`tty` reports no terminal", async () => {
    const r = await s.call("bash", { command: "tty" });
    expect(r.stdout).toBe("not a tty\n");
    expect(r.exit_code).not.toBe(0);
  });
});
