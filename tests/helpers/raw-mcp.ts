import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, waitForExit } from "./mcp.ts";

/**
 * `agent-shell mcp` spawned directly, spoken to with raw JSON-RPC lines: for what the SDK
 * client cannot do (write malformed bytes, close only stdin, signal the server).
 */
export interface RawServer {
  proc: ReturnType<typeof Bun.spawn>;
  pid: number;
  cwd: string;
  /** The server's state dir (task folders live under it). */
  stateDir: string;
  /** Writes one raw line (a newline is appended). */
  writeLine(line: string): void;
  /** Sends a JSON-RPC request and resolves with its response. */
  request(method: string, params?: unknown): Promise<any>;
  /** The response to request `id` (however it was written, e.g. several requests in one writeLine). */
  responseTo(id: number): Promise<any>;
  /** Sends a JSON-RPC request; returns the id and the response promise without awaiting it. */
  send(method: string, params?: unknown): { id: number; response: Promise<any> };
  notify(method: string, params?: unknown): void;
  /** Ends the server's stdin (EOF). */
  endStdin(): void;
  /** Every message received so far. */
  received: any[];
  /** Kills the server if still alive and removes its temp dirs. */
  dispose(): Promise<void>;
}

/** `initialized: false`: the client is answered initialize and never says `notifications/initialized`. */
export async function spawnRaw(args: string[] = [], opts: { initialized?: boolean } = {}): Promise<RawServer> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "as-raw-cwd-")));
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "as-raw-state-")));
  const proc = Bun.spawn([BINARY, "mcp", "--state-dir", stateDir, ...args], {
    cwd,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const received: any[] = [];
  const waiters = new Map<number, (msg: any) => void>();
  // Read stdout line by line; route responses to their waiters.
  void (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        let msg: any;
        try {
          msg = JSON.parse(line);
        } catch {
          msg = { unparsable: line };
        }
        received.push(msg);
        if (msg && typeof msg.id === "number" && waiters.has(msg.id)) {
          waiters.get(msg.id)!(msg);
          waiters.delete(msg.id);
        }
      }
    }
  })();
  // Drain stderr so the server never blocks on it.
  void new Response(proc.stderr as ReadableStream<Uint8Array>).text().catch(() => {});
  let nextId = 1;
  const stdin = proc.stdin as import("bun").FileSink;
  const writeLine = (line: string) => {
    stdin.write(line + "\n");
    stdin.flush();
  };
  const send = (method: string, params?: unknown) => {
    const id = nextId++;
    const response = new Promise<any>((resolve) => waiters.set(id, resolve));
    writeLine(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }));
    return { id, response };
  };
  const server: RawServer = {
    proc,
    pid: proc.pid,
    cwd,
    stateDir,
    received,
    writeLine,
    send,
    request: (method, params) => send(method, params).response,
    responseTo(id) {
      const got = received.find((m) => m?.id === id);
      return got ? Promise.resolve(got) : new Promise((resolve) => waiters.set(id, resolve));
    },
    notify(method, params) {
      writeLine(JSON.stringify({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }));
    },
    endStdin() {
      stdin.end();
    },
    async dispose() {
      try {
        proc.kill("SIGKILL");
      } catch {
        /* already gone */
      }
      await waitForExit(proc.pid, 5000).catch(() => {});
      rmSync(cwd, { recursive: true, force: true });
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
  const init = await server.request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw-test", version: "0" },
  });
  if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
  if (opts.initialized !== false) server.notify("notifications/initialized");
  return server;
}

/** The structured result of a tools/call response. */
export function toolResult(response: any): any {
  return response.result?.structuredContent;
}
