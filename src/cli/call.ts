import { ToolHost } from "../host/tool-host.ts";
import { isErrorResult } from "../errors.ts";
import { parseHostFlags } from "./host-flags.ts";
import { hostOptions } from "./host-options.ts";
import { confirmOnTerminal } from "./prompt.ts";
import { UsageError } from "./usage.ts";

/** `agent-shell call TOOL [JSON|-]`: one in-process tool call, result JSON on stdout. */
export async function callCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseHostFlags("call", argv);
  if (values.help) {
    process.stdout.write((await import("./call-help.ts")).CALL_HELP);
    return 0;
  }
  const [tool, json, ...extra] = positionals;
  if (!tool) throw new UsageError("call needs a tool name: agent-shell call TOOL [JSON|-]");
  if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(" ")} (quote the JSON as one argument)`);
  const text = json === "-" ? await Bun.stdin.text() : (json ?? "{}");
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`the arguments are not valid JSON: ${(e as Error).message}`);
  }
  const { routesToDaemon, callViaDaemon } = await import("./call-daemon.ts");
  if (routesToDaemon(tool, args)) return callViaDaemon(tool, args, values);
  const host = new ToolHost({
    ...hostOptions(values),
    // Run from a person's terminal: its environment is already theirs.
    userShell: false,
    confirmationPolicy: {
      kind: "ask",
      ask: (question) => confirmOnTerminal(values.yes, interrupted.signal)(question),
    },
  });
  const interrupted = new AbortController();
  const onSignal = () => interrupted.abort();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const result = await host.call(tool, args, { signal: interrupted.signal, connection: { client: "agent-shell call", transport: "cli" } });
    process.stdout.write(JSON.stringify(result, null, 2) + "\n");
    return isErrorResult(result) ? 1 : 0;
  } finally {
    await host.close();
  }
}
