/**
 * What makes a result cheap must not change what it says: the JSON text is serialized once
 * and reused, a result cut to size is a copy, and task_list's per-task caches (start time,
 * the sandbox_denied scan of an ended task) give the same entries call after call.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { capResultSize, MAX_RESULT_BYTES, resultJson } from "../../src/host/result-size.ts";
import { startServer, type McpSession } from "../helpers/mcp.ts";

setDefaultTimeout(60_000);

describe("result text (pure)", () => {
  test("resultJson is the JSON of the result capResultSize returned", () => {
    const result = { tasks: [{ task_id: "bg-1", command: "echo \"hi\"\n", pid: 7 }] };
    const capped = capResultSize(result);
    expect(capped).toBe(result);
    expect(resultJson(capped)).toBe(JSON.stringify(result));
  });

  test("a result cut to size is a copy: the object given (which may share objects with tasks) is unchanged", () => {
    const shared = { stdout: "x".repeat(MAX_RESULT_BYTES), stderr: "" };
    const result = { tasks: [shared] };
    const capped = capResultSize(result);
    expect(capped).not.toBe(result);
    expect(shared.stdout.length).toBe(MAX_RESULT_BYTES);
    expect(Buffer.byteLength(resultJson(capped))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(resultJson(capped)).toBe(JSON.stringify(capped));
    expect((capped.tasks as Array<Record<string, unknown>>)[0]!.stdout_truncated).toBe(true);
  });

  test("a result of many-byte characters is measured in bytes", () => {
    // 0.9 M characters of three UTF-8 bytes each: 2.7 MB, over the limit though its length is not.
    const result = { stdout: "€".repeat(900_000) };
    const capped = capResultSize(result);
    expect(Buffer.byteLength(resultJson(capped))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(capped.stdout_truncated).toBe(true);
  });
});

describe("task_list entries stay the same from call to call", () => {
  let s: McpSession;
  let victim: string;
  beforeAll(async () => {
    s = await startServer();
    victim = realpathSync(mkdtempSync("/var/tmp/as-result-cost-victim-"));
  });
  afterAll(async () => {
    await s.close();
    rmSync(victim, { recursive: true, force: true });
  });

  test("a failed sandboxed task keeps its sandbox_denied in every listing; times are ISO-8601", async () => {
    const bg = await s.call("bash", { command: `touch ${victim}/denied.txt`, run_in_background: true });
    const out = await s.call("task_output", { task_id: bg.task_id, wait: true, timeout: 10 });
    expect(out.exit_code).toBe(1);
    const first = (await s.call("task_list", {})).tasks.find((t: any) => t.task_id === bg.task_id);
    const again = (await s.call("task_list", {})).tasks.find((t: any) => t.task_id === bg.task_id);
    expect(first.sandbox_denied.paths).toEqual([`${victim}/denied.txt`]);
    expect(again).toEqual(first);
    expect(new Date(first.started_at).toISOString()).toBe(first.started_at);
    expect(new Date(first.ended_at).toISOString()).toBe(first.ended_at);
  });

  test("the text content is exactly the JSON of structuredContent, and no field is null", async () => {
    const bg = await s.call("bash", { command: "sleep 30", run_in_background: true });
    try {
      const raw = await s.callRaw("task_list", { status: "running" });
      expect(raw.content[0].text).toBe(JSON.stringify(raw.structuredContent));
      const entry = raw.structuredContent.tasks.find((t: any) => t.task_id === bg.task_id);
      expect(entry).toMatchObject({ task_id: bg.task_id, task_type: "background", kind: "bash", status: "running", command: "sleep 30" });
      expect(entry).not.toContainKeys(["tty", "restarts", "sandbox"]); // defaults left out: the result says the sandbox once
      expect(raw.structuredContent.sandbox).toBe("workspace-write");
      expect(typeof entry.pid).toBe("number");
      expect(Object.values(entry)).not.toContain(null);
    } finally {
      await s.call("kill_shell", { task_id: bg.task_id });
    }
  });
});

test("task_list is ordered by id number also after a persistent registry recovers its tasks (bg-2 before bg-10)", async () => {
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-order-")));
  try {
    const a = await startServer({ stateDir, args: ["--persist"] });
    try {
      for (let i = 0; i < 12; i++) {
        const t = await a.call("bash", { command: "true", run_in_background: true });
        await a.call("task_output", { task_id: t.task_id, wait: true, timeout: 10 });
      }
    } finally {
      await a.close();
    }
    const b = await startServer({ stateDir, args: ["--persist"] });
    try {
      const added = await b.call("bash", { command: "true", run_in_background: true });
      const ids = (await b.call("task_list", {})).tasks.map((t: { task_id: string }) => t.task_id);
      expect(ids).toEqual([...Array.from({ length: 12 }, (_, i) => `bg-${i + 1}`), added.task_id]);
      expect(added.task_id).toBe("bg-13");
    } finally {
      await b.close();
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
});
