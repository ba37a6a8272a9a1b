/**
 * Runs the ordinary developer steps of tests/sandbox/workflows/steps.ts in a plain bash and through
 * agent-shell (default sandbox) and writes docs/workflows.md: each step, how it went, and why.
 *
 *   bun run build.ts && bun run scripts/workflow-table.ts
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { startServer } from "../tests/helpers/mcp.ts";
import { runWorkflows } from "../tests/sandbox/workflows/steps.ts";

const rows = await runWorkflows((opts) => startServer(opts));
const count = (v: string) => rows.filter((r) => r.verdict === v).length;
const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
const lines = [
  "# Ordinary work in the sandbox",
  "",
  "Each step below was run twice, in a plain `bash` and through `agent-shell mcp` with the default",
  "sandbox, each in a project folder and `HOME` of its own; the effect was then checked from",
  "outside (the same command in both folders). A step is **as in a terminal** when the exit",
  "status and the effect agree, **refused, clear** when agent-shell did not do it and said why",
  "(`sandbox_denied` with its kind and hint, or a `BLOCKED` error naming the reason), **refused,",
  "unclear** when it failed and nothing said the sandbox did it, and **silently different** when",
  "it said it worked and the effect differs. `tests/sandbox/workflows/workflows.test.ts` runs the same steps and",
  "fails on any unclear or silently different row. Regenerate with",
  "`bun run build.ts && bun run scripts/workflow-table.ts`.",
  "",
  `Totals: ${count("as in a terminal")} as in a terminal, ${count("refused, clear")} refused with a clear reason, ${count("refused, unclear")} unclear, ${count("silently different")} silently different.`,
  "",
  "| area | step | result | detail |",
  "|---|---|---|---|",
  ...rows.map((r) => `| ${r.step.area} | ${cell(r.step.name)} | ${r.verdict} | ${cell(r.detail)} |`),
  "",
];
writeFileSync(resolve(import.meta.dir, "../docs/workflows.md"), lines.join("\n"));
console.log(lines.slice(12).join("\n"));
