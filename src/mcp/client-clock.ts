import type { Config } from "../config/schema.ts";

/**
 * The client's clock (SPEC §23): a client that gives up on a call cancels it, and its command
 * is killed. Where the client's tool timeout is known, a call is answered shortly before it:
 * a command still running is handed over as a background task (tools/answer-by.ts).
 *
 * Known only from config `client_timeout_seconds`: no client measured so far sets a limit of
 * its own from what it sends as `clientInfo` (2026-11: Claude Code 2.1.332, Codex 0.171.0 and
 * Gemini CLI 0.61.0 let a 70 s call finish; the OpenAI Agents SDK's 5 s default is its
 * `client_session_timeout_seconds`, and its clientInfo is the Python SDK's generic "mcp").
 */

/** How long before the client's limit the answer goes: a fifth of it, at most 2 s. */
function margin(limitMs: number): number {
  return Math.min(2000, limitMs / 5);
}

/** When (Date.now() ms) a call received at `receivedAt` is answered at the latest, or undefined: no known limit. */
export function answerBy(config: Pick<Config, "client_timeout_seconds">, receivedAt = Date.now()): number | undefined {
  const seconds = config.client_timeout_seconds;
  if (seconds === undefined) return undefined;
  return receivedAt + seconds * 1000 - margin(seconds * 1000);
}
