/**
 * SPEC §14 hostile input over MCP stdio, against the compiled binary: a line over 10 MiB is
 * answered with a JSON-RPC error and skipped without buffering it (the server keeps
 * answering, memory stays bounded, stdin EOF still ends it and its tasks); invalid JSON
 * gets -32700 with id null; a command over Linux's one-argument limit is INVALID_ARGUMENT.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { alive, waitForExit } from "../helpers/mcp.ts";
import { spawnRaw, toolResult, type RawServer } from "../helpers/raw-mcp.ts";

setDefaultTimeout(60_000);

let raw: RawServer | undefined;
afterEach(async () => {
  await raw?.dispose();
  raw = undefined;
});

/** The server's peak resident memory in MB (VmHWM). */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m![1]) / 1024;
}

/** Resolves with the first received message matching `pred`. */
async function nextMatching(server: RawServer, pred: (m: any) => boolean): Promise<any> {
  for (;;) {
    const found = server.received.find(pred);
    if (found) return found;
    await Bun.sleep(5); // polling the helper's message list: it offers no event
  }
}

describe("an MCP line over 10 MiB", () => {
  test("a 200 MB line is answered with a JSON-RPC error (id null), discarded, and the next request is answered", async () => {
    raw = await spawnRaw();
    // Once warm (the sandbox, spawner and the bash grammar are made off the first call's path), as a client meets it.
    await raw.request("tools/call", { name: "bash", arguments: { command: "echo 'warm' | cat" } });
    const before = peakRssMb(raw.pid);
    const stdin = raw.proc.stdin as import("bun").FileSink;
    const chunk = "x".repeat(1024 * 1024);
    for (let i = 0; i < 200; i++) {
      stdin.write(chunk);
      await stdin.flush();
    }
    stdin.write("\n");
    await stdin.flush();
    const error = await nextMatching(raw, (m) => m.error && m.id === null);
    expect(error.error.code).toBe(-32600);
    expect(error.error.message).toContain("10485760 bytes");
    const resp = await raw.request("tools/call", { name: "bash", arguments: { command: "echo after" } });
    expect(toolResult(resp).stdout).toBe("after\n");
    // 200 MB went through; memory grew by about the 10 MiB limit (plus garbage), not the line.
    expect(peakRssMb(raw.pid) - before).toBeLessThan(100);
  });

  test("stdin EOF in the middle of an oversized line still ends the server and its tasks", async () => {
    raw = await spawnRaw();
    const started = toolResult(await raw.request("tools/call", { name: "bash", arguments: { command: "sleep 300", run_in_background: true } }));
    const taskPid: number = started.pid;
    expect(alive(taskPid)).toBe(true);
    const stdin = raw.proc.stdin as import("bun").FileSink;
    stdin.write("y".repeat(11 * 1024 * 1024));
    await stdin.flush();
    await nextMatching(raw, (m) => m.error && m.id === null);
    raw.endStdin();
    expect(await raw.proc.exited).toBe(0);
    await waitForExit(taskPid, 5000);
    expect(alive(taskPid)).toBe(false);
  });
});

describe("invalid JSON", () => {
  test("gets the JSON-RPC parse error -32700 with id null, and the server keeps answering", async () => {
    raw = await spawnRaw();
    raw.writeLine("{this is not json");
    const error = await nextMatching(raw, (m) => m.error?.code === -32700);
    expect(error).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect(error.error.message).toContain("not valid JSON");
    const list = await raw.request("tools/list", {});
    expect(list.result.tools.length).toBeGreaterThan(0);
  });

  test("JSON that is not a JSON-RPC message gets -32600 with id null", async () => {
    raw = await spawnRaw();
    raw.writeLine('"just a string"');
    const error = await nextMatching(raw, (m) => m.error?.code === -32600);
    expect(error.id).toBeNull();
  });
});

describe("a command longer than Linux's limit for one argument", () => {
  test("is INVALID_ARGUMENT naming command and the 128 KiB limit, not an E2BIG IO_ERROR", async () => {
    raw = await spawnRaw();
    const command = "echo " + "a".repeat(131072);
    const r = toolResult(await raw.request("tools/call", { name: "bash", arguments: { command } }));
    expect(r.error_code).toBe("INVALID_ARGUMENT");
    expect(r.error).toContain("command");
    expect(r.error).toContain("131071 bytes (128 KiB)");
  });

  test("a command of exactly 131071 bytes still runs", async () => {
    raw = await spawnRaw();
    const command = "true " + "#".repeat(131071 - 5);
    const r = toolResult(await raw.request("tools/call", { name: "bash", arguments: { command } }));
    expect(r.exit_code).toBe(0);
  });
});
