
/**
 * Asks on the terminal whether a caution command may run. Ctrl-C at the prompt, or
 * SIGTERM/SIGHUP while it waits, answers no (the process must never hang on a prompt).
 */
export async function askYesNo(command: string, signal?: AbortSignal): Promise<boolean> {
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
    process.stderr.write(`\nThis command may be destructive:\n    ${command}\n`);
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
export function confirmOnTerminal(yes: boolean | undefined, signal?: AbortSignal): (command: string) => Promise<boolean> {
  return async (command) => yes === true || (process.stdin.isTTY === true && (await askYesNo(command, signal)));
}
