/**
 * What the model reads (SPEC §15 proof): runs the corpus of bench/output/corpus.ts (real tools,
 * each in a temp dir made and removed here) twice, plainly and through the compiled
 * dist/agent-shell over MCP with the SDK client, and reports for each log the o200k tokens a
 * model reads from agent-shell's result, from the raw output, from Claude Code's and Codex's own
 * cuts of it, and whether every needle survives in each. Prints a markdown table and writes
 * bench/output-results.json. Not part of CI or the test suite: `bun run bench:output`.
 *
 * `bun run bench/output-corpus.ts [name ...]` runs only the named logs; `BENCH_OUTPUT_SAVE=DIR`
 * keeps every raw output and agent-shell result there; `AGENT_SHELL_BINARY=PATH` measures another
 * build (e.g. main's, for a before/after) and `BENCH_OUTPUT_JSON=FILE` writes its results elsewhere.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BINARY, startServer } from "../tests/helpers/mcp.ts";
import { machine } from "./lib.ts";
import { corpus, type CorpusLog } from "./output/corpus.ts";
import { claudeCodeBash, claudeCodeMcp, codexCut, missingNeedles } from "./output/cuts.ts";
import { startFileServer } from "./output/file-server.ts";
import { tokens } from "./output/tokens.ts";

// Variables by which tools notice an agent or CI and print less. The raw run and agent-shell's
// server start without them, so "raw" is what the tool prints to a plain pipe and agent-shell's
// own choice (SPEC §15 agent-aware children) is what is measured.
const AGENT_MARKERS = [
  "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CODEX_CI", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED",
  "GEMINI_CLI", "AGENT", "AI_AGENT", "CI", "CONTINUOUS_INTEGRATION", "GITHUB_ACTIONS", "CURSOR_AGENT", "OPENCODE",
];
for (const k of AGENT_MARKERS) delete process.env[k];

/** `BENCH_OUTPUT_SAVE=DIR` keeps each log's raw output and agent-shell's MCP text there, to read. */
const SAVE = process.env.BENCH_OUTPUT_SAVE;
if (SAVE) mkdirSync(SAVE, { recursive: true });

const only = process.argv.slice(2);
const logs = only.length ? corpus.filter((l) => only.includes(l.name)) : corpus;
if (only.length && logs.length !== only.length) throw new Error(`unknown log name; known: ${corpus.map((l) => l.name).join(", ")}`);

const startedAt = performance.now();
const log = (msg: string): void => void process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${msg}\n`);

interface View {
  chars: number;
  bytes: number;
  tokens: number;
  missing: string[];
}
function view(text: string, needles: string[]): View {
  return { chars: text.length, bytes: Buffer.byteLength(text), tokens: tokens(text), missing: missingNeedles(text, needles) };
}

/** Both runs start from the same files at the same path (a build's second run would find the first's objects). */
function fresh(pristine: string, dir: string) {
  rmSync(dir, { recursive: true, force: true });
  const r = spawnSync("cp", ["-a", pristine, dir]);
  if (r.status !== 0) throw new Error(`cp -a ${pristine} ${dir}: ${r.stderr}`);
}

/** The command as a plain pipe sees it: `bash -c`, stdout and stderr interleaved as a terminal shows them. */
async function runRaw(command: string, cwd: string) {
  const t0 = performance.now();
  const p = Bun.spawn(["bash", "-c", `{ ${command}\n} 2>&1`], { cwd, stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  const [text, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  return { text, code, ms: Math.round(performance.now() - t0) };
}

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "as-output-corpus-")));
const files = await startFileServer();
const session = await startServer({ cwd: scratch, stateDir: join(scratch, "state") });
const rows: any[] = [];
const toolDefinitions = { tools: 0, tokens: 0, goal_max: 1_800 };
try {
  // What every request of a harness carries besides the results: the tool definitions of tools/list.
  const listed = (await session.client.listTools()).tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  Object.assign(toolDefinitions, { tools: listed.length, tokens: tokens(JSON.stringify(listed)) });
  for (const entry of logs) rows.push(await measure(entry));
} finally {
  await session.close();
  await files.stop();
  rmSync(scratch, { recursive: true, force: true });
}

async function measure(entry: CorpusLog) {
  const pristine = join(scratch, `${entry.name}.setup`);
  const dir = join(scratch, entry.name);
  mkdirSync(pristine, { recursive: true });
  log(`${entry.name}: setting up`);
  const { command, needles } = await entry.setup({ dir: pristine, url: files.url });
  log(`${entry.name}: raw run of ${command}`);
  fresh(pristine, dir);
  const raw = await runRaw(command, dir);
  fresh(pristine, dir);
  log(`${entry.name}: raw exit ${raw.code}, ${Buffer.byteLength(raw.text)} bytes in ${raw.ms} ms; agent-shell run`);
  const t0 = performance.now();
  const result: any = await session.callRaw("bash", { command, working_directory: dir, timeout_seconds: 900 });
  const asMs = Math.round(performance.now() - t0);
  const text = (result.content ?? []).map((c: any) => (c.type === "text" ? c.text : "")).join("\n");
  const s = result.structuredContent ?? {};
  if (SAVE) {
    writeFileSync(join(SAVE, `${entry.name}.raw.txt`), raw.text);
    writeFileSync(join(SAVE, `${entry.name}.agent-shell.txt`), text);
  }
  const row = {
    name: entry.name,
    what: entry.what,
    noisy: entry.noisy,
    command,
    needles,
    raw: { ...view(raw.text, needles), exit_code: raw.code, ms: raw.ms, lines: raw.text.split("\n").length },
    agent_shell: {
      ...view(text, needles),
      ms: asMs,
      exit_code: s.exit_code,
      omitted: Boolean(s.stdout_truncated || s.stderr_truncated),
      output_task_id: s.output_task_id,
    },
    claude_code_bash: view(claudeCodeBash(raw.text), needles),
    codex: view(codexCut(raw.text), needles),
    agent_shell_in_claude_code: view(claudeCodeMcp(text), needles),
    agent_shell_in_codex: view(codexCut(text), needles),
    goals: {} as Record<string, boolean>,
  };
  row.goals.needles_survive = row.agent_shell.missing.length === 0;
  row.goals.under_10000_chars = row.agent_shell.chars <= 10_000;
  if (entry.noisy) {
    row.goals.five_x_fewer_than_raw = row.raw.tokens >= 5 * row.agent_shell.tokens;
    row.goals.fewer_than_claude_code = row.agent_shell.tokens < row.claude_code_bash.tokens;
    row.goals.fewer_than_codex = row.agent_shell.tokens < row.codex.tokens;
  }
  if (row.raw.missing.length) log(`${entry.name}: WARNING the raw output lacks needles ${JSON.stringify(row.raw.missing)} (corpus or tool changed?)`);
  log(`${entry.name}: agent-shell ${row.agent_shell.chars} chars / ${row.agent_shell.tokens} tokens, raw ${row.raw.tokens} tokens, missing ${JSON.stringify(row.agent_shell.missing)}`);
  return row;
}

// ---------- report ----------

const fmt = (n: number) => n.toLocaleString("en-US");
const kept = (v: View, needles: string[]) => (v.missing.length ? `${needles.length - v.missing.length}/${needles.length}` : "all");
const lines = [
  "| log | raw lines | raw tokens | agent-shell chars | agent-shell tokens | raw ÷ agent-shell | Claude Code Bash tokens | Codex tokens | needles kept: agent-shell / raw / Claude Code / Codex | goals |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
];
for (const r of rows) {
  const failed = Object.entries(r.goals).filter(([, ok]) => !ok).map(([g]) => g);
  lines.push(
    `| ${r.name}${r.noisy ? "" : " (not noisy)"} | ${fmt(r.raw.lines)} | ${fmt(r.raw.tokens)} | ${fmt(r.agent_shell.chars)} | ${fmt(r.agent_shell.tokens)} | ` +
      `${(r.raw.tokens / Math.max(1, r.agent_shell.tokens)).toFixed(1)}× | ${fmt(r.claude_code_bash.tokens)} | ${fmt(r.codex.tokens)} | ` +
      `${kept(r.agent_shell, r.needles)} / ${kept(r.raw, r.needles)} / ${kept(r.claude_code_bash, r.needles)} / ${kept(r.codex, r.needles)} | ` +
      `${failed.length ? "MISSED: " + failed.join(", ") : "met"} |`,
  );
}
const table = lines.join("\n");
console.log(table);
for (const r of rows) {
  for (const [who, v] of Object.entries({ "agent-shell": r.agent_shell, "Claude Code": r.claude_code_bash, Codex: r.codex })) {
    if ((v as View).missing.length) console.log(`- ${r.name}, ${who} loses: ${(v as View).missing.map((m) => JSON.stringify(m)).join(", ")}`);
  }
}
const allMet = rows.every((r) => Object.values(r.goals).every(Boolean));
console.log(`\nTool definitions (tools/list: name, description, input schema): ${toolDefinitions.tools} tools, ${fmt(toolDefinitions.tokens)} tokens (goal ≤ ${fmt(toolDefinitions.goal_max)}).`);
console.log(allMet ? "Every goal of the corpus met." : "Some goals of the corpus missed (see the table).");

const out = process.env.BENCH_OUTPUT_JSON ?? resolve(import.meta.dir, only.length ? "output-results.partial.json" : "output-results.json");
writeFileSync(
  out,
  JSON.stringify(
    {
      machine: machine(),
      binary: BINARY,
      binary_version: Bun.spawnSync([BINARY, "--version"]).stdout.toString().trim(),
      tokenizer: "o200k_base (gpt-tokenizer)",
      models: {
        claude_code_bash: "first 30,000 characters of the output",
        claude_code_mcp: "an MCP result over 50,000 characters: a 2,000-character preview and the saved file's path",
        codex: "first 5,000 and last 5,000 bytes around a marker",
      },
      all_goals_met: allMet,
      tool_definitions: toolDefinitions,
      logs: rows,
      table,
    },
    null,
    2,
  ) + "\n",
);
log(`wrote ${out}`);
