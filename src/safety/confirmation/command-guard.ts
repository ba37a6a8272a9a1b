import type { NetworkAnswer, NetworkQuestion } from "../../sandbox/network/calls.ts";
import { CodedError } from "../../errors.ts";
import { needsParser, parserReady } from "../parser/bash-parser.ts";
import { classification, decideLine } from "../rules/decide.ts";
import type { Rule } from "../rules/rules.ts";
import type { CallNote } from "./call-note.ts";
import type { PendingConfirmations } from "./confirmations.ts";
import { type AskPerson, type ConfirmationQuestion, confirmByPerson, refusedWithoutPerson, unaskedNote, unaskedRecord } from "./person-confirmation.ts";

/**
 * How a caution command gets approved: the MCP two-step flow (`pending`: the model repeats
 * the call with confirmed: true), a prompt/flag in the CLI (`ask`), the MCP client's person
 * through elicitation (`person`, SPEC §19; `orModel`: when the client answers without its
 * person, the two-step flow stands in), or not at all (`nobody`: confirm_by = "person" and
 * the client cannot ask its person).
 */
export type ConfirmationPolicy =
  | { kind: "pending" }
  | { kind: "ask"; ask: (question: ConfirmationQuestion) => Promise<boolean> }
  | { kind: "person"; ask: AskPerson; orModel: boolean; askNetwork?: (question: NetworkQuestion) => Promise<NetworkAnswer> }
  | { kind: "nobody" };

export interface CommandRequest {
  command: string;
  description?: string;
  confirmed?: boolean;
  /** What a confirmation binds (requestBinding of the whole call); the command alone when absent. */
  binding?: string;
  /** Where it would run, for the person's question (SPEC §19). */
  cwd?: string;
  host?: string;
  /** This very call is already confirmed (the question about its looser sandbox named this command too). */
  alreadyConfirmed?: boolean;
  /** The user's rules (SPEC §22), tried before the §6 table. */
  rules?: readonly Rule[];
  /** Where the decision and who confirmed are noted for the audit record. */
  note?: CallNote;
}

/**
 * Blocked patterns, then confirmation of caution commands, in the original's order (the
 * working directory is checked before). Throws BLOCKED; resolves with the
 * `needs_confirmation` result to answer with, or null when the command may run.
 */
export async function confirmCommand(
  request: CommandRequest,
  policy: ConfirmationPolicy,
  confirmations: PendingConfirmations,
): Promise<Record<string, unknown> | null> {
  if (needsParser(request.command)) await parserReady();
  const context = { command: request.command, description: request.description ?? null };
  const decided = decideLine(request.command, request.rules ?? [], { cwd: request.cwd, host: request.host });
  const verdict = classification(decided);
  const note = request.note ?? {};
  note.decision = decided.decision;
  const waived = decided.items.find((i) => i.waived);
  note.decided_by = decided.deciding?.by ?? waived?.by ?? decided.items.find((i) => i.rule)?.by ?? "no rule or §6 entry";
  if (decided.decision === "allow" && waived) note.confirmed_by = "rule";
  if (verdict.kind === "blocked") {
    const rule = decided.deciding?.rule;
    throw new CodedError("BLOCKED", rule ? deniedMessage(decided.deciding!.what, decided.deciding!.command) : blockedMessage(verdict.what), context);
  }
  if (verdict.kind === "allowed") return null;
  if (request.alreadyConfirmed) {
    note.confirmed_by ??= "person";
    return null;
  }
  const approved = await confirmWith(request, policy, confirmations, verdict, note);
  if (approved === null) note.confirmed_by ??= policy.kind === "person" ? "person" : policy.kind === "ask" ? "cli" : "model";
  return approved;
}

async function confirmWith(
  request: CommandRequest,
  policy: ConfirmationPolicy,
  confirmations: PendingConfirmations,
  verdict: { what: string; part: string },
  note: CallNote,
): Promise<Record<string, unknown> | null> {
  const context = { command: request.command, description: request.description ?? null };
  const binding = request.binding ?? request.command;
  const question: ConfirmationQuestion = { field: "command", text: request.command, cwd: request.cwd ?? "", host: request.host, reasons: [verdict.what], part: verdict.part };
  // A person is asked every time; the model's `confirmed` plays no part...
  if (policy.kind === "person" || policy.kind === "nobody") {
    if (policy.kind === "nobody") throw refusedWithoutPerson(question);
    // ...unless the client answered this very request without its person: asking again would
    // reach the same client, so the model's retry is the confirmation (used once, as in §6).
    if (request.confirmed && confirmations.consume(unaskedRecord(binding))) {
      note.confirmed_by = "model";
      return null;
    }
    const answer = await confirmByPerson(policy, question);
    if (answer.approved) return null;
    confirmations.request(unaskedRecord(binding));
    return needsConfirmation(request, verdict.what, answer);
  }
  if (policy.kind === "ask") {
    // The person answers here: `confirmed: true` in the call's own JSON never stands in for them (SPEC §20).
    if (await policy.ask(question)) return null;
    throw new CodedError(
      "BLOCKED",
      "Command cancelled: it needs confirmation (answer y at the prompt, or pass --yes when there is no terminal)",
      context,
    );
  }
  if (!request.confirmed) {
    confirmations.request(binding);
    return needsConfirmation(request, verdict.what);
  }
  if (!confirmations.consume(binding)) {
    throw new CodedError(
      "BLOCKED",
      "Cannot confirm command that was not previously flagged for confirmation with these exact arguments (command, working_directory, env, stdin, tty, host and sandbox must all match; a confirmation also expires after 10 minutes, is used once, and belongs to the connection that was asked: a client that starts a new server process per call cannot confirm). First call bash without confirmed=true, then retry with confirmed=true after user approval, on the same connection.",
      context,
    );
  }
  return null;
}

/** The first step of the two-step flow; `unasked`: it stands in for a client that answered without its person. */
function needsConfirmation(request: CommandRequest, what: string, unasked?: { detail?: string }): Record<string, unknown> {
  return {
    needs_confirmation: true,
    command: request.command,
    message:
      (unasked ? unaskedNote(unasked.detail) + " " : "") +
      `This command may be destructive (${what}): ${request.command}. Please confirm execution: ask the user, then call again with confirmed: true and exactly the same arguments (command, working_directory, env, stdin, tty, host, sandbox).`,
    ...(request.description !== undefined ? { description: request.description } : {}),
  };
}

/** A user's rule denied it: its reason, and the command of the line it named. */
export function deniedMessage(reason: string, command: string): string {
  return `Command denied by the user's rules (${reason}): ${command.trim()}. Do it another way, or ask the user.`;
}

/** In words, never the internal pattern (SPEC §15): what the command would do, and what to do instead. */
export function blockedMessage(what: string): string {
  return `Command blocked (${what}): agent-shell never runs this. Do it another way, or ask the user to run it themselves if it is really needed.`;
}
