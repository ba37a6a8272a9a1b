import type { ToolResult } from "../errors.ts";
import type { DaemonClient } from "./daemon-client.ts";
import { confirmOnTerminal } from "./prompt.ts";

/**
 * Calls a daemon tool and handles the MCP confirmation step the terminal way: the
 * daemon flags a caution command, we ask `Proceed? [y/N]` on a TTY (or take `--yes`),
 * then confirm that exact command. Without a TTY and without --yes it is refused.
 */
export async function callConfirmed(
  client: DaemonClient,
  name: string,
  args: Record<string, unknown>,
  yes: boolean,
  timeoutMs?: number,
): Promise<ToolResult> {
  // The JSON's own `confirmed: true` is not the person's answer: ask first, as for any call (SPEC §20).
  const { confirmed: _ignored, ...asked } = args;
  const first = await client.call(name, asked, timeoutMs);
  if (first.needs_confirmation !== true) return first;
  const command = String(first.command ?? args.command);
  const approved = await confirmOnTerminal(yes)(command);
  if (!approved) {
    return {
      error: "Command cancelled: it needs confirmation (answer y at the prompt, or pass --yes when there is no terminal)",
      error_code: "BLOCKED",
      context: { command },
    };
  }
  return client.call(name, { ...args, confirmed: true }, timeoutMs);
}
