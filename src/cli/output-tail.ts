/** Prints the last lines of a failed task's stdout/stderr (from an error's context) on stderr. */
export function printOutputTail(ctx: Record<string, unknown>, lines = 20): void {
  for (const stream of ["stdout", "stderr"] as const) {
    const text = typeof ctx[stream] === "string" ? (ctx[stream] as string) : "";
    if (!text) continue;
    const tail = text.replace(/\n$/, "").split("\n").slice(-lines).join("\n");
    process.stderr.write(`--- ${stream} (last lines) ---\n${tail}\n`);
  }
}
