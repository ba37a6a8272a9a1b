import { createInterface } from "node:readline/promises";

/** Asks on the terminal whether a caution command may run. */
export async function askYesNo(command: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    process.stderr.write(`\nThis command may be destructive:\n    ${command}\n`);
    const answer = (await rl.question("Proceed? [y/N] ")).trim().toLowerCase();
    return answer === "y" || answer === "yes";
  } finally {
    rl.close();
  }
}
