/** SPEC §16, pure parts: far-side task ids as the near side shows them, the launcher's status line, one way in per host. */
import { describe, expect, test } from "bun:test";
import { farArgs, nearResult, splitId } from "../../src/host/far/task-ids.ts";
import { launchScript, parseStatus } from "../../src/runtime/far/agent-scripts.ts";
import { ConfigSchema } from "../../src/config/schema.ts";

const isFar = (h: string) => h === "box";

describe("far-side task ids", () => {
  test("box:bg-3 names task bg-3 of host box; local ids and unknown prefixes stay local", () => {
    expect(splitId("box:bg-3", isFar)).toEqual({ host: "box", id: "bg-3" });
    expect(splitId("box:web", isFar)).toEqual({ host: "box", id: "web" });
    expect(splitId("bg-3", isFar)).toBeNull();
    expect(splitId("podman:bg-3", isFar)).toBeNull();
    expect(farArgs({ task_ids: ["box:bg-1", "box:bg-2"], wait: true }, (id) => splitId(id, isFar)!.id)).toEqual({ task_ids: ["bg-1", "bg-2"], wait: true });
  });

  test("results get the host and near-side ids, in lists too; errors name the id the caller used", () => {
    expect(nearResult("box", { task_id: "bg-1", status: "running" })).toEqual({ task_id: "box:bg-1", status: "running", host: "box" });
    expect(nearResult("box", { results: [{ task_id: "bg-1" }], finished: ["bg-1"] })).toEqual({
      results: [{ task_id: "box:bg-1", host: "box" }],
      finished: ["box:bg-1"],
      host: "box",
    });
    expect(nearResult("box", { tasks: [{ task_id: "bg-2" }] })).toEqual({ tasks: [{ task_id: "box:bg-2", host: "box" }], host: "box" });
    expect(nearResult("box", { error: "Task bg-9 not found (…)", error_code: "NOT_FOUND", context: { task_id: "bg-9" } })).toEqual({
      error: "Task box:bg-9 not found (…)",
      error_code: "NOT_FOUND",
      context: { task_id: "box:bg-9", host: "box" },
    });
  });
});

describe("the far launcher", () => {
  test("its status line says ready, missing (with uname) or another version", () => {
    expect(parseStatus("agent-shell-far ready /home/dev")).toEqual({ kind: "ready", home: "/home/dev" });
    expect(parseStatus("agent-shell-far missing /root/.cache/agent-shell/1.0/agent-shell Linux aarch64")).toEqual({
      kind: "missing",
      path: "/root/.cache/agent-shell/1.0/agent-shell",
      os: "Linux",
      arch: "aarch64",
    });
    expect(parseStatus("agent-shell-far other /opt/a 0.9.0")).toEqual({ kind: "other", path: "/opt/a", version: "0.9.0" });
    expect(parseStatus("bash: sh: not found").kind).toBe("unknown");
  });

  test("the script quotes every path and declares the connection's directory, allowed paths and sandbox", () => {
    const s = launchScript({ version: "1.0", agentPath: "/opt/it's/agent-shell", cwd: "~/work", allow: ["/data"], sandbox: "read-only" });
    expect(s).toContain(`p='/opt/it'\\''s/agent-shell'`);
    expect(s).toContain(`mcp --shared --cwd "$HOME"/'work' --allow '/data' --sandbox 'read-only'`);
  });
});

describe("[hosts.NAME] ways in", () => {
  const parse = (host: Record<string, unknown>) => ConfigSchema.safeParse({ hosts: { h: host } });
  test("exactly one of host, container, exec", () => {
    expect(parse({ container: "c" }).success).toBe(true);
    expect(parse({ exec: ["kubectl", "exec", "-i", "pod", "--"] }).success).toBe(true);
    expect(parse({ host: "h", agent: true }).success).toBe(true);
    expect(parse({ host: "h", container: "c" }).error?.issues[0]?.message).toBe("give one way in, not host and container");
    expect(parse({}).error?.issues[0]?.message).toContain("give one way in");
    expect(parse({ host: "h", engine: "docker" }).error?.issues[0]?.message).toBe("engine applies only with container");
    expect(parse({ container: "c", engine: "lxc" }).success).toBe(false);
  });
});
