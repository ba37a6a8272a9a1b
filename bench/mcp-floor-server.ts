/**
 * The contained MCP floor, measured: the least a stdio MCP server that contains each command
 * as agent-shell does can cost. It reads one JSON-RPC line, starts `bash -c COMMAND` through
 * the kept spawner (the default policy's sandbox for its cwd, a task cgroup and a process
 * limit: bench/helper-floor.ts), reads its pipes, awaits its exit and writes one line back.
 * No SDK, no schema, no registry, no safety check, no output shaping: what is left is the
 * transit of two pipes, JSON and the containment itself. bench/run.ts drives it with the
 * line client beside agent-shell.
 *
 *   bun bench/mcp-floor-server.ts STATE_ROOT [--sandbox off]
 */
import { closeHelperFloors, helperFloor } from "./helper-floor.ts";

const [stateRoot, flag, value] = process.argv.slice(2);
if (!stateRoot) throw new Error("usage: mcp-floor-server.ts STATE_ROOT [--sandbox off]");
const sandboxed = !(flag === "--sandbox" && value === "off");
const runners = new Map<string, () => Promise<void>>();
const out = Bun.stdout.writer();

function reply(id: unknown, result: object): void {
  out.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
  void out.flush();
}

async function handle(message: { id?: unknown; method?: string; params?: any }): Promise<void> {
  if (message.id === undefined) return; // a notification
  if (message.method === "initialize") {
    reply(message.id, { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "mcp-floor", version: "0" } });
  } else if (message.method === "tools/call" && message.params.name === "bash") {
    const command = String(message.params.arguments.command);
    let run = runners.get(command);
    if (!run) runners.set(command, (run = helperFloor(command, process.cwd(), stateRoot!, sandboxed)));
    await run();
    // What agent-shell's result for `true` holds, give or take its sandbox report.
    reply(message.id, { content: [{ type: "text", text: "" }], structuredContent: { command, exit_code: 0, stdout: "", stderr: "", success: true } });
  } else {
    reply(message.id, { content: [{ type: "text", text: "{}" }], structuredContent: {} });
  }
}

const decoder = new TextDecoder();
let pending = "";
for await (const chunk of Bun.stdin.stream()) {
  pending += decoder.decode(chunk, { stream: true });
  for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.trim()) void handle(JSON.parse(line));
  }
}
closeHelperFloors();
