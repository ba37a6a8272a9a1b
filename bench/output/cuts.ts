/**
 * What each harness hands its model for a tool's output, modelled from the harnesses' documented
 * limits (the harness trial, bench/harness-trial.ts, records the real thing), and how the bench
 * decides whether a needle (an error line that must survive) is still readable in a text.
 */

/** Claude Code's Bash tool: the first 30,000 characters, then a note of what was left out. */
export function claudeCodeBash(raw: string): string {
  const max = 30_000;
  if (raw.length <= max) return raw;
  const left = raw.slice(max).split("\n").length;
  return `${raw.slice(0, max)}\n\n... [${left} lines truncated] ...`;
}

/** Claude Code and an MCP result over 50,000 characters: saved to a file, the model sees a 2,000-character preview. */
export function claudeCodeMcp(text: string): string {
  if (text.length <= 50_000) return text;
  return (
    `Output too large (${text.length} characters). Full output saved to: ` +
    `/root/.claude/projects/-work/tool-results/mcp-shell-bash-0000000000000.txt\n` +
    `Read the file in chunks to see all of it.\n\nPreview (first 2000 chars):\n${text.slice(0, 2_000)}\n...`
  );
}

/** Codex: one output in the history keeps its first and last 5,000 bytes around a marker. */
export function codexCut(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= 10_000) return text;
  const head = bytes.subarray(0, 5_000).toString("utf8");
  const tail = bytes.subarray(bytes.length - 5_000).toString("utf8");
  const cutTokens = Math.round((bytes.length - 10_000) / 4);
  return `${head}…${cutTokens} tokens truncated…${tail}`;
}

const ANSI = /\x1b\[[0-?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

function strings(v: unknown, out: string[]) {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v && typeof v === "object") for (const x of Object.values(v)) strings(x, out);
}

/**
 * The text as a reader takes it in: a JSON result's string fields decoded (a cut one's escapes
 * undone by hand), terminal colours dropped, so a needle matches whether or not it was coloured
 * or escaped, but never across a cut.
 */
export function readable(text: string): string {
  let plain: string;
  try {
    const out: string[] = [];
    strings(JSON.parse(text), out);
    plain = out.join("\n");
  } catch {
    plain = text.includes('\\"') || text.includes("\\n")
      ? text.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, e: string) =>
          e.length === 5 ? String.fromCharCode(parseInt(e.slice(1), 16)) : e === "n" ? "\n" : e === "t" ? "\t" : e === "r" ? "\r" : e)
      : text;
  }
  return plain.replace(ANSI, "");
}

/** Which needles are missing from `text` (empty when every one survives). */
export function missingNeedles(text: string, needles: string[]): string[] {
  const r = readable(text);
  return needles.filter((n) => !r.includes(n));
}
