import { type ConfirmationQuestion, questionMessage } from "../safety/confirmation/person-confirmation.ts";

/**
 * Asks on the terminal whether a caution command may run. Ctrl-C at the prompt, or
 * SIGTERM/SIGHUP while it waits, answers no (the process must never hang on a prompt).
 */
export function askYesNo(question: ConfirmationQuestion, signal?: AbortSignal): Promise<boolean> {
  return askOnTerminal(questionMessage(question), signal);
}

/** Shows `text`, then asks `Proceed? [y/N]`; anything but y/yes, Ctrl-C or a signal is no. */
async function askOnTerminal(text: string, signal?: AbortSignal): Promise<boolean> {
  // Loaded here, not at the top: see main.ts.
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const stop = new AbortController();
  const abort = () => stop.abort();
  signal?.addEventListener("abort", abort, { once: true });
  rl.on("SIGINT", abort);
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, abort);
  try {
    process.stderr.write(`\n${text}\n`);
    const answer = (await rl.question("Proceed? [y/N] ", { signal: stop.signal })).trim().toLowerCase();
    return answer === "y" || answer === "yes";
  } catch {
    process.stderr.write("\n");
    return false;
  } finally {
    for (const s of signals) process.off(s, abort);
    signal?.removeEventListener("abort", abort);
    rl.close();
  }
}

/** The CLI's confirmation: `--yes`, else the prompt on a terminal, else no. */
export function confirmOnTerminal(yes: boolean | undefined, signal?: AbortSignal): (question: ConfirmationQuestion) => Promise<boolean> {
  return async (question) => yes === true || (process.stdin.isTTY === true && (await askYesNo(question, signal)));
}

/**
 * The CLI's answer to the daemon's confirmation question (SPEC §19: the daemon asks the
 * person behind the connection): `--yes`, else the prompt on a terminal showing the
 * question, else no. `refused` says why it was no without asking (no terminal).
 */
export function answerOnTerminal(yes: boolean | undefined): (message: string, signal?: AbortSignal) => Promise<"yes" | "no" | "no-terminal"> {
  return async (message, signal) => {
    if (yes === true) return "yes";
    if (process.stdin.isTTY !== true) return "no-terminal";
    return (await askOnTerminal(message, signal)) ? "yes" : "no";
  };
}
