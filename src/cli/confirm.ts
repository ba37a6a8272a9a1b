import { needsParser, parserReady } from "../safety/parser/bash-parser.ts";
import type { ToolResult } from "../errors.ts";
import type { DaemonClient } from "./daemon-client.ts";
import { answerOnTerminal, confirmOnTerminal } from "./prompt.ts";
import { commandQuestion } from "../safety/confirmation/person-confirmation.ts";

const REFUSED = "Command cancelled: it needs confirmation (answer y at the prompt, or pass --yes when there is no terminal)";

/**
 * Calls a daemon tool and handles confirmation the terminal way. The daemon asks this
 * connection's person (SPEC §19): we show its question and ask `Proceed? [y/N]` on a TTY
 * (or take `--yes`). Under confirm_by = "model" the daemon flags the command instead, we
 * ask the same way, then confirm that exact command. Without a TTY and without --yes it is
 * refused.
 */
export async function callConfirmed(
  client: DaemonClient,
  name: string,
  args: Record<string, unknown>,
  yes: boolean,
  timeoutMs?: number,
): Promise<ToolResult> {
  let noTerminal = false;
  const done = new AbortController(); // a question still open when the call has answered is withdrawn
  const answer = answerOnTerminal(yes);
  client.person = async (message, signal) => {
    const said = await answer(message, AbortSignal.any([signal, done.signal]));
    noTerminal ||= said === "no-terminal";
    return said === "yes";
  };
  let first: ToolResult;
  try {
    // The JSON's own `confirmed: true` is not the person's answer: ask first, as for any call (SPEC §20).
    const { confirmed: _ignored, ...asked } = args;
    first = await client.call(name, asked, timeoutMs);
  } finally {
    client.person = null;
    done.abort();
  }
  const command = String(first.command ?? args.command);
  if (noTerminal && first.error_code === "BLOCKED") return { error: REFUSED, error_code: "BLOCKED", context: { command } };
  if (first.needs_confirmation !== true) return first;
  const where = { cwd: String(args.working_directory ?? process.cwd()), ...(typeof args.host === "string" ? { host: args.host } : {}) };
  if (needsParser(command)) await parserReady();
  const approved = await confirmOnTerminal(yes)(commandQuestion(command, where));
  if (!approved) return { error: REFUSED, error_code: "BLOCKED", context: { command } };
  return client.call(name, { ...args, confirmed: true }, timeoutMs);
}
