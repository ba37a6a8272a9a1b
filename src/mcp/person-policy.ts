import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { type ElicitRequestFormParams, ErrorCode, McpError, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../config/schema.ts";
import type { ConfirmationPolicy } from "../safety/confirmation/command-guard.ts";
import type { NetworkAnswer, NetworkQuestion } from "../sandbox/network/calls.ts";
import { oneLine } from "../safety/confirmation/one-line.ts";
import { type ConfirmationQuestion, PERSON_MIN_MS, type PersonAnswer, questionMessage } from "../safety/confirmation/person-confirmation.ts";

/** The one field a person answers: a yes/no, answerable in one step. */
const REQUESTED_SCHEMA: ElicitRequestFormParams["requestedSchema"] = {
  type: "object",
  properties: { confirm: { type: "boolean", title: "Run it?", description: "Yes runs it once; no runs nothing." } },
  required: ["confirm"],
};

/**
 * Who confirms this connection's calls (SPEC §19), decided per call from what its client
 * declared: its person through elicitation when it can ask (form elicitation), unless
 * `confirm_by = "model"`; else the model's two-step flow, or nobody with `confirm_by = "person"`.
 * Under `auto`, a client that answers without its person falls back to the two-step flow.
 * Works for any per-connection Server (stdio, a daemon connection, an HTTP session): the
 * question goes to the client that made the call, tied to that call's request.
 */
export function connectionPolicy(
  server: Server,
  config: Pick<Config, "confirm_by" | "confirm_timeout_seconds">,
  call: { requestId: RequestId; signal: AbortSignal },
): ConfirmationPolicy {
  if (config.confirm_by === "model") return { kind: "pending" };
  const canAsk = server.getClientCapabilities()?.elicitation?.form !== undefined;
  if (!canAsk) return config.confirm_by === "person" ? { kind: "nobody" } : { kind: "pending" };
  const timeoutMs = config.confirm_timeout_seconds * 1000;
  return {
    kind: "person",
    ask: (question) => askPerson(server, question, timeoutMs, call),
    orModel: config.confirm_by === "auto",
    askNetwork: (question) => askAboutName(server, question, timeoutMs, call),
  };
}

/** The question about a name the network allowlist does not know (SPEC §21): once, for the server's life, or no. */
const NETWORK_SCHEMA: ElicitRequestFormParams["requestedSchema"] = {
  type: "object",
  properties: {
    answer: {
      type: "string",
      title: "Allow it?",
      enum: ["once", "always", "no"],
      enumNames: ["Allow this connection", "Allow it until agent-shell exits", "Refuse it"],
    },
  },
  required: ["answer"],
};

export function networkQuestionMessage(q: NetworkQuestion): string {
  const commands = q.commands.length ? q.commands.map((c) => oneLine(c, 500)) : ["(no command is running)"];
  return [
    `Allow a sandboxed command to connect to ${oneLine(q.host, 100)} port ${q.port}?${q.internal ? ` It resolves to ${q.internal}, an address on this machine or your local network.` : ""}`,
    "",
    `Command: ${commands.join(" | ")}`,
    "",
    "The name is in none of agent-shell's network_allow or network_deny lists. Refusing (or no answer) refuses the connection.",
  ].join("\n");
}

async function askAboutName(server: Server, q: NetworkQuestion, timeoutMs: number, call: { requestId: RequestId; signal: AbortSignal }): Promise<NetworkAnswer> {
  try {
    const answer = await server.elicitInput(
      { mode: "form", message: networkQuestionMessage(q), requestedSchema: NETWORK_SCHEMA },
      { relatedRequestId: call.requestId, timeout: timeoutMs, maxTotalTimeout: timeoutMs },
    );
    const given = answer.action === "accept" ? answer.content?.answer : "no";
    return given === "once" || given === "always" ? given : "no";
  } catch {
    return "no";
  }
}

async function askPerson(server: Server, question: ConfirmationQuestion, timeoutMs: number, call: { requestId: RequestId; signal: AbortSignal }): Promise<PersonAnswer> {
  let answer;
  const asked = performance.now();
  try {
    answer = await server.elicitInput(
      { mode: "form", message: questionMessage(question), requestedSchema: REQUESTED_SCHEMA },
      // The call's own request: over HTTP the question travels on that call's stream.
      { relatedRequestId: call.requestId, signal: call.signal, timeout: timeoutMs, maxTotalTimeout: timeoutMs },
    );
  } catch (e) {
    // (An aborted request fails with RequestTimeout too: the call's own cancellation first.)
    if (call.signal.aborted) return { approved: false, why: "cancelled", detail: "the call was cancelled while waiting" };
    if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) return { approved: false, why: "timeout", detail: `no answer within ${timeoutMs / 1000} s` };
    if (e instanceof McpError && e.code === ErrorCode.InvalidParams && /does not match requested schema/.test(e.message)) {
      return { approved: false, why: "invalid", detail: e.message.replace(/^MCP error -?\d+: /, "") };
    }
    return { approved: false, why: "failed", detail: (e as Error).message };
  }
  const ms = Math.round(performance.now() - asked);
  // Sooner than anyone could read the question: the client's own answer, not its person's.
  if (answer.action !== "accept" && ms < PERSON_MIN_MS) return { approved: false, why: "unasked", detail: `it answered "${answer.action}" within ${ms} ms` };
  if (answer.action === "decline") return { approved: false, why: "declined" };
  if (answer.action === "cancel") return { approved: false, why: "cancelled" };
  // Validated against REQUESTED_SCHEMA by the SDK; still, only a literal true runs anything.
  return answer.content?.confirm === true ? { approved: true } : { approved: false, why: "declined", detail: "the answer was no" };
}
