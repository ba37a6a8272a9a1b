/**
 * The main job: a short tour of the compiled binary over real MCP (the official SDK client).
 * Run with `bun run demo` (builds first). Leaves nothing running and no files behind.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const binary = process.env.AGENT_SHELL_BINARY ?? resolve(import.meta.dir, "../dist/agent-shell");
const work = mkdtempSync(join(tmpdir(), "agent-shell-demo-"));
const transport = new StdioClientTransport({ command: binary, args: ["mcp", "--state-dir", join(work, "state")], cwd: work, stderr: "inherit" });
const client = new Client({ name: "agent-shell-demo", version: "1" });
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => show("notice", n.params.data));
await client.connect(transport);

const bold = (text: string) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[1m${text}\x1b[0m` : text);
function show(label: string, value: unknown) {
  console.log(`\n${bold(label)}\n${JSON.stringify(value, null, 2)}`);
}
async function call(name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  show(`${name} ${JSON.stringify(args)}`, result.structuredContent);
  return result.structuredContent as Record<string, any>;
}

try {
  const { tools } = await client.listTools();
  console.log(`agent-shell tools: ${tools.map((t) => t.name).join(", ")}`);
  await call("bash", { command: "echo hello from $(basename $PWD); echo to stderr > /dev/stderr" });
  await call("bash", { command: "echo working; sleep 5", timeout_seconds: 1 });
  const port = 20000 + Math.floor(Math.random() * 20000);
  // Node is on every machine the quick start targets; python3 or curl may not be.
  const server = `require('http').createServer((q, r) => r.end('hello from the web task')).listen(${port}, '127.0.0.1')`;
  const web = await call("bash", { command: `exec node -e "${server}"`, run_in_background: true, ready_port: port, name: "web" });
  await call("bash", { command: `node -e "fetch('http://127.0.0.1:${port}/').then(r => r.text()).then(console.log)"` });
  const build = await call("bash", { command: "for i in 1 2 3; do echo step $i; sleep 0.2; done; exit 3", run_in_background: true });
  await call("task_output", { task_id: build.task_id, wait: true });
  await call("task_list", {});
  await call("kill_shell", { task_id: web.task_id });
  await call("bash", { command: "rm -rf /" });
  await call("bash", { command: "rm notes.txt" });
} finally {
  await client.close();
  rmSync(work, { recursive: true, force: true });
}
