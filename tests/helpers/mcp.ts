import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type ClientCapabilities, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The compiled binary under test (`AGENT_SHELL_BINARY` overrides, as for build.ts). */
export const BINARY = process.env.AGENT_SHELL_BINARY ?? resolve(import.meta.dir, "../../dist/agent-shell");

export interface McpSession {
  client: Client;
  transport: StdioClientTransport;
  /** The server's cwd: a fresh temp dir, removed by close(). */
  cwd: string;
  /** State dir given to the server: a fresh temp dir, removed by close(). */
  stateDir: string;
  /** Server pid. */
  pid: number;
  /** Logging notifications received so far (data payloads). */
  notices: Array<Record<string, unknown>>;
  /** Calls a tool and returns its structured result. */
  call(name: string, args?: Record<string, unknown>, opts?: { signal?: AbortSignal; timeout?: number }): Promise<any>;
  /** The raw MCP result of a call. */
  callRaw(name: string, args?: unknown): Promise<any>;
  close(): Promise<void>;
}

export interface StartOptions {
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  stateDir?: string;
  /** What the client declares (e.g. elicitation); none when absent. */
  capabilities?: ClientCapabilities;
  /** Runs before connecting: e.g. a request handler playing the person. */
  setup?: (client: Client) => void;
}

/** Starts `dist/agent-shell mcp` in a fresh temp cwd and connects the official SDK client. */
export async function startServer(opts: StartOptions = {}): Promise<McpSession> {
  const ownCwd = opts.cwd === undefined;
  const cwd = opts.cwd ?? realpathSync(mkdtempSync(join(tmpdir(), "as-test-cwd-")));
  const ownState = opts.stateDir === undefined;
  const stateDir = opts.stateDir ?? realpathSync(mkdtempSync(join(tmpdir(), "as-test-state-")));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  Object.assign(env, opts.env);
  const transport = new StdioClientTransport({
    command: BINARY,
    args: ["mcp", "--state-dir", stateDir, ...(opts.args ?? [])],
    cwd,
    env,
    stderr: "pipe",
  });
  const client = new Client({ name: "agent-shell-tests", version: "0" }, opts.capabilities ? { capabilities: opts.capabilities } : undefined);
  opts.setup?.(client);
  const notices: Array<Record<string, unknown>> = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    notices.push(n.params.data as Record<string, unknown>);
  });
  await client.connect(transport);
  // The SDK client validates every structuredContent against the tool's outputSchema once it
  // has listed the tools: with this, every call of every test checks the SPEC §12 schemas.
  await client.listTools();
  const pid = transport.pid!;
  const callRaw = (name: string, args: unknown = {}, o: { signal?: AbortSignal; timeout?: number } = {}) =>
    client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, {
      signal: o.signal,
      timeout: o.timeout ?? 120_000,
    });
  return {
    client,
    transport,
    cwd,
    stateDir,
    pid,
    notices,
    callRaw,
    async call(name, args = {}, o = {}) {
      const raw: any = await callRaw(name, args, o);
      return raw.structuredContent;
    },
    async close() {
      await client.close().catch(() => {});
      await waitForExit(pid, 5000);
      if (ownCwd) rmSync(cwd, { recursive: true, force: true });
      if (ownState) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** Resolves once `pid` no longer exists (or is a zombie); throws after `ms`. */
export async function waitForExit(pid: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still alive after ${ms} ms`);
    await Bun.sleep(10);
  }
}

export function alive(pid: number): boolean {
  try {
    const stat = require("node:fs").readFileSync(`/proc/${pid}/stat`, "latin1") as string;
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}
