import { CodedError } from "../../errors.ts";
import { classifyCommand } from "../rules/decide.ts";
import { oneLine } from "./one-line.ts";

/**
 * What a person is asked before a call that needs confirmation runs (SPEC §19): the command
 * (or a subagent's prompt), where it would run, and in words why agent-shell asks.
 */
export interface ConfirmationQuestion {
  field: "command" | "prompt";
  /** The command (bash) or the prompt (task), exactly as it would run. */
  text: string;
  /** The working directory it would run in. */
  cwd: string;
  /** A configured SSH host; absent: this machine. */
  host?: string;
  /** In words, what the call would do that needs a person's yes (never a pattern); the first leads. */
  reasons: string[];
  /** The very part of `text` the first reason is about (one segment of the command line); absent: all of it. */
  part?: string;
}

/** A person's answer; anything but `approved` runs nothing. `unasked`: the client answered without its person. */
export type PersonAnswer =
  | { approved: true }
  | { approved: false; why: "declined" | "cancelled" | "timeout" | "invalid" | "failed" | "unasked"; detail?: string };

/** Asks the person behind this connection (an MCP client that can elicit). */
export type AskPerson = (question: ConfirmationQuestion) => Promise<PersonAnswer>;

/**
 * A decline or cancel sooner than this after asking is the client's own (headless clients
 * answer within milliseconds): nobody reads a question that fast (SPEC §19).
 */
export const PERSON_MIN_MS = 500;

/** The question about a command, with what it would do (the first caution rule it meets) and where. */
export function commandQuestion(command: string, where: { cwd: string; host?: string }, more: string[] = []): ConfirmationQuestion {
  const verdict = classifyCommand(command);
  const caution = verdict.kind === "caution" ? verdict : null;
  return { field: "command", text: command, ...where, reasons: [...(caution ? [caution.what] : []), ...more], ...(caution ? { part: caution.part } : {}) };
}

/**
 * The text a person reads. Its first line stands alone (a harness may show only that one):
 * what would happen, the part that needs the yes, the folder and the host. The whole
 * command follows on one line, then the details.
 */
export function questionMessage(q: ConfirmationQuestion): string {
  return [
    firstLine(q),
    "",
    `${q.field === "command" ? "Command" : "Prompt"}: ${oneLine(q.text, 2000)}`,
    `Folder: ${oneLine(q.cwd, 500)}`,
    `Host: ${q.host === undefined ? "this machine" : `${oneLine(q.host, 200)} (over SSH)`}`,
    "",
    "It runs once if you accept; nothing runs if you decline.",
  ].join("\n");
}

function firstLine(q: ConfirmationQuestion): string {
  const [first = "needs a confirmation", ...more] = q.reasons;
  const what = q.field === "prompt" ? `Starts a subagent that ${first}` : first[0]!.toUpperCase() + first.slice(1);
  const also = more.map((r) => `; it also ${r}`).join("");
  const where = q.host === undefined ? "on this machine" : `on ${oneLine(q.host, 40)} over SSH`;
  // Budgets keep the line short enough to read at a glance; the cut is in the middle.
  return `${what}: ${oneLine(q.part ?? q.text, 100)}${also} (in ${oneLine(q.cwd, 60)}, ${where})`;
}

/**
 * Asks the person. Resolves the approval, or the `unasked` answer when the client answered
 * without its person and `orModel` lets the model's two-step flow stand in (confirm_by =
 * "auto"); otherwise throws BLOCKED saying what was answered.
 */
export async function confirmByPerson(
  policy: { ask: AskPerson; orModel: boolean },
  question: ConfirmationQuestion,
): Promise<{ approved: true } | { approved: false; why: "unasked"; detail?: string }> {
  const answer = await policy.ask(question);
  if (answer.approved || (answer.why === "unasked" && policy.orModel)) return answer as { approved: true } | { approved: false; why: "unasked" };
  const context = { [question.field]: question.text, person: answer.why };
  const [what, next] = NOT_APPROVED[answer.why];
  throw new CodedError("BLOCKED", `Not run: ${what}${answer.detail ? ` (${answer.detail})` : ""}. Nothing was started; ${next}`, context);
}

type Refusal = Exclude<PersonAnswer, { approved: true }>["why"];

/** What happened, and what the model should do next. */
const NOT_APPROVED: Record<Refusal, [string, string]> = {
  declined: ["the person declined it", "do not repeat it unless the user asks for it."],
  cancelled: ["the person cancelled the question", "do not repeat it unless the user asks for it."],
  timeout: ["the person did not answer in time", "call again when the user is there to answer."],
  invalid: ["the person's answer did not fit the question, so it counts as no", "call again to ask again."],
  failed: ["the question could not be put to the person", "tell the user; their MCP client failed to ask them."],
  unasked: [
    "the MCP client answered the confirmation question itself, without asking its person, and the configuration says only a person may confirm (confirm_by = \"person\")",
    "run it from a client that shows the question to its person, from a terminal with the agent-shell CLI, or set confirm_by = \"auto\" or \"model\".",
  ],
};

/** Said to the model when the two-step flow stands in for a client that answered without its person. */
export function unaskedNote(detail: string | undefined): string {
  return `The MCP client answered agent-shell's confirmation question itself${detail ? ` (${detail})` : ""}, without asking its person (headless and CI clients do), so you confirm instead.`;
}

/** The record of a request flagged because its client answered without its person: a `confirmed: true` retry runs on it. */
export const unaskedRecord = (binding: string) => `\0unasked\0${binding}`;

/** confirm_by = "person" and this client cannot ask its person: refused, saying why. */
export function refusedWithoutPerson(question: Pick<ConfirmationQuestion, "field" | "text" | "reasons">): CodedError {
  return new CodedError(
    "BLOCKED",
    `Not run: it needs a person's confirmation (${question.reasons.join("; ")}), the configuration says only a person may confirm (confirm_by = "person"), ` +
      "and this MCP client cannot ask its person (it did not declare the elicitation capability). Run it from a client that supports elicitation, " +
      "from a terminal with the agent-shell CLI, or set confirm_by = \"auto\".",
    { [question.field]: question.text },
  );
}
