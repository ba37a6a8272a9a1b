/**
 * The first answer of a burst arrives early: requests that arrive together are handed on in
 * growing batches, one batch per turn of the event loop, so the first reply is written before
 * the later requests are handled (rather than every reply leaving at the end).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { PacedDispatch } from "../../src/mcp/transports/paced-dispatch.ts";
import { spawnRaw, toolResult } from "../helpers/raw-mcp.ts";
import { uniqueSleep, waitNoProcess } from "../helpers/procs.ts";

setDefaultTimeout(60_000);

const message = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" }) as JSONRPCMessage;

describe("PacedDispatch (pure)", () => {
  test("a lone message is handed on at once", () => {
    const got: number[] = [];
    new PacedDispatch((m) => got.push((m as { id: number }).id)).push(message(1));
    expect(got).toEqual([1]);
  });

  test("of a burst, the first is handed on at once and its reply is written before the second is handled; order is kept", async () => {
    const events: string[] = [];
    let resolveAll!: () => void;
    const all = new Promise<void>((r) => (resolveAll = r));
    const inbox = new PacedDispatch((m) => {
      const id = (m as { id: number }).id;
      events.push(`handle ${id}`);
      // A handler's work runs in microtasks after it is handed on, its reply at their end.
      void Promise.resolve()
        .then(() => undefined)
        .then(() => {
          events.push(`reply ${id}`);
          if (id === 100) resolveAll();
        });
    });
    for (let id = 1; id <= 100; id++) inbox.push(message(id));
    expect(events).toEqual(["handle 1"]);
    await all;
    const handled = events.filter((e) => e.startsWith("handle")).map((e) => Number(e.split(" ")[1]));
    expect(handled).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(events.indexOf("reply 1")).toBeLessThan(events.indexOf("handle 2"));
    expect(events.indexOf("reply 2")).toBeLessThan(events.indexOf("handle 3"));
    expect(events.indexOf("reply 50")).toBeLessThan(events.indexOf("handle 100"));
  });

  test("drain hands on everything still queued, in order", () => {
    const got: number[] = [];
    const inbox = new PacedDispatch((m) => got.push((m as { id: number }).id));
    for (let id = 1; id <= 5; id++) inbox.push(message(id));
    expect(got).toEqual([1]);
    inbox.drain();
    expect(got).toEqual([1, 2, 3, 4, 5]);
  });
});

describe("a burst over stdio", () => {
  // Whether the first reply leaves before the last start is handled is a matter of timing on a
  // loaded machine: bench/run.ts measures it (first reply of a burst); the order is tested above.
  test("100 background starts sent in one write: each its own task, and the last one's log files exist once named", async () => {
    const server = await spawnRaw();
    const marker = uniqueSleep(611);
    try {
      const n = 100;
      const firstId = 1000;
      const lines = Array.from({ length: n }, (_, i) =>
        JSON.stringify({ jsonrpc: "2.0", id: firstId + i, method: "tools/call", params: { name: "bash", arguments: { command: `sleep ${marker}`, run_in_background: true } } }),
      );
      const replies = Array.from({ length: n }, (_, i) => server.responseTo(firstId + i));
      server.writeLine(lines.join("\n"));
      const first = toolResult(await replies[0]!);
      expect(first.status).toBe("running");
      expect(first.task_id).toBe("bg-1");
      const all = await Promise.all(replies);
      const ids = all.map((r) => toolResult(r).task_id);
      expect(new Set(ids).size).toBe(n);
      // Every task's log files exist once task_output names them (SPEC §14), made off the event loop meanwhile.
      server.writeLine(JSON.stringify({ jsonrpc: "2.0", id: 5000, method: "tools/call", params: { name: "task_output", arguments: { task_id: `bg-${n}` } } }));
      const out = toolResult(await server.responseTo(5000));
      expect(existsSync(out.stdout_path)).toBe(true);
      expect(existsSync(out.stderr_path)).toBe(true);
    } finally {
      await server.dispose();
    }
    expect(await waitNoProcess(`sleep ${marker}`, 5000)).toEqual([]);
  });
});
