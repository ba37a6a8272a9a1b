import { CodedError } from "../errors.ts";

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
  /** In words, what the call would do that needs a person's yes (never a pattern). */
  reasons: string[];
}

/** A person's answer; anything but `approved` runs nothing. */
export type PersonAnswer =
  | { approved: true }
  | { approved: false; why: "declined" | "cancelled" | "timeout" | "invalid" | "failed"; detail?: string };

/** Asks the person behind this connection (an MCP client that can elicit). */
export type AskPerson = (question: ConfirmationQuestion) => Promise<PersonAnswer>;

/** The text a person reads: command, folder, host and what it would do. */
export function questionMessage(q: ConfirmationQuestion): string {
  const what = q.field === "command" ? "run this command" : "start this subagent";
  return [
    `An agent asks agent-shell to ${what}:`,
    "",
    `${q.field === "command" ? "Command" : "Prompt"}: ${q.text}`,
    `Folder: ${q.cwd}`,
    `Host: ${q.host === undefined ? "this machine" : `${q.host} (over SSH)`}`,
    `What it would do: ${q.reasons.join("; ")}`,
    "",
    "It runs once if you accept; nothing runs if you decline.",
  ].join("\n");
}

/** Asks the person; resolves when they accepted, else throws BLOCKED saying what they answered. */
export async function confirmByPerson(ask: AskPerson, question: ConfirmationQuestion): Promise<void> {
  const answer = await ask(question);
  if (answer.approved) return;
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
};

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
