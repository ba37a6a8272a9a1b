/**
 * Harness trial (SPEC §15 proof; not in CI): installs Claude Code, Codex CLI and Gemini CLI from
 * npm into a temp prefix, points each at the scripted stand-in model of bench/harness/standin-model.ts
 * on 127.0.0.1, with agent-shell (dist/agent-shell mcp) configured as MCP server `shell`, and
 * records what each harness hands back to its model as the bash tool's result for three cases:
 * a short command, a failing command and a noisy build (4,000 progress lines, one error TS2322
 * line in the middle). Prints a table and writes bench/harness-results.json.
 *
 * Network: the npm registry (the install) and 127.0.0.1 only. `HARNESS_PREFIX=DIR` reuses an
 * install made earlier (npm install --prefix DIR …); `bun run bench/harness-trial.ts claude` runs one harness;
 * `AGENT_SHELL_BINARY=PATH` tries another build (`BENCH_OUTPUT_JSON=FILE` writes its results elsewhere);
 * `STANDIN_DUMP=FILE` appends every request the stand-in gets.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BINARY, startServer } from "../tests/helpers/mcp.ts";
import { processes } from "../tests/helpers/procs.ts";
import { startStandIn, type StandIn } from "./harness/standin-model.ts";
import { machine } from "./lib.ts";
import { missingNeedles } from "./output/cuts.ts";
import { tokens } from "./output/tokens.ts";

const VERSIONS = { claude: "@anthropic-ai/claude-code@2.1.328", codex: "@openai/codex@0.169.0", gemini: "@google/gemini-cli@0.61.0" };
const CASES: Record<string, string> = {
  short: "echo hello from the shell; uname -s",
  failing: "cat config/missing.yaml",
  noisy:
    "for i in $(seq 1 4000); do echo \"[build] compiling module $i/4000 src/modules/m$i.ts (12.3 kB, 4 ms)\"; " +
    // The error line is built at run time so that the command echoed in a result never matches it.
    `if [ $i -eq 2000 ]; then echo "src/app.ts(14,7): error TS$((2300 + 22)): Type 'string' is not assignable to type 'number'."; fi; done; exit 2`,
};
const NEEDLES: Record<string, string[]> = {
  short: ["hello from the shell", "Linux"],
  failing: ["config/missing.yaml: No such file or directory"],
  noisy: ["error TS2322: Type 'string' is not assignable to type 'number'."],
};
const PER_RUN_MS = 240_000;

const startedAt = performance.now();
const log = (msg: string): void => void process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${msg}\n`);
const only = process.argv.slice(2);
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "as-harness-trial-")));

interface Harness {
  name: keyof typeof VERSIONS;
  /** Writes the harness's config under `home` and returns how to run one prompt. */
  prepare(home: string, work: string, model: StandIn): { argv: (prompt: string) => string[]; env: Record<string, string> };
}

const mcpArgs = (home: string) => ["mcp", "--state-dir", join(home, "agent-shell-state")];

const harnesses: Harness[] = [
  {
    name: "claude",
    prepare(home, work, model) {
      const config = join(home, "mcp.json");
      writeFileSync(config, JSON.stringify({ mcpServers: { shell: { command: BINARY, args: mcpArgs(home) } } }));
      return {
        env: {
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: "sk-ant-standin",
          DISABLE_TELEMETRY: "1",
          DISABLE_AUTOUPDATER: "1",
          DISABLE_ERROR_REPORTING: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          // MCP tools load up front (not behind ToolSearch), so the stand-in can call bash in one turn.
          ENABLE_TOOL_SEARCH: "false",
        },
        argv: (prompt) => [bin("claude"), "-p", prompt, "--mcp-config", config, "--strict-mcp-config", "--allowedTools", "mcp__shell__bash", "--model", "claude-sonnet-4-5", "--output-format", "json"],
      };
    },
  },
  {
    name: "codex",
    prepare(home, work, model) {
      const codexHome = join(home, ".codex");
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(
        join(codexHome, "config.toml"),
        [
          `model = "gpt-5-codex"`,
          `model_provider = "standin"`,
          `approval_policy = "never"`,
          ``,
          `[model_providers.standin]`,
          `name = "Stand-in"`,
          `base_url = "${model.url}/v1"`,
          `wire_api = "responses"`,
          `env_key = "STANDIN_API_KEY"`,
          ``,
          `[mcp_servers.shell]`,
          `command = ${JSON.stringify(BINARY)}`,
          `args = ${JSON.stringify(mcpArgs(home))}`,
          `default_tools_approval_mode = "approve"`,
          ``,
        ].join("\n"),
      );
      return {
        env: { CODEX_HOME: codexHome, STANDIN_API_KEY: "standin" },
        argv: (prompt) => [bin("codex"), "exec", "--skip-git-repo-check", "-C", work, prompt],
      };
    },
  },
  {
    name: "gemini",
    prepare(home, work, model) {
      mkdirSync(join(home, ".gemini"), { recursive: true });
      writeFileSync(
        join(home, ".gemini", "settings.json"),
        JSON.stringify({
          mcpServers: { shell: { command: BINARY, args: mcpArgs(home), trust: true } },
          security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
          telemetry: { enabled: false },
          privacy: { usageStatisticsEnabled: false },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
        }),
      );
      return {
        env: { GEMINI_API_KEY: "standin", GOOGLE_GEMINI_BASE_URL: model.url },
        argv: (prompt) => [bin("gemini"), "-p", prompt, "--yolo", "-m", "gemini-2.5-pro"],
      };
    },
  },
];

let prefix = process.env.HARNESS_PREFIX ?? "";
const bin = (name: string) => join(prefix, "node_modules", ".bin", name);

async function install(): Promise<void> {
  if (prefix) return log(`using the harnesses installed in ${prefix}`);
  prefix = join(scratch, "npm");
  mkdirSync(prefix, { recursive: true });
  const wanted = harnesses.filter((h) => !only.length || only.includes(h.name)).map((h) => VERSIONS[h.name]);
  log(`npm install ${wanted.join(" ")}`);
  const p = Bun.spawn(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", ...wanted], { stdout: "inherit", stderr: "inherit" });
  if ((await p.exited) !== 0) throw new Error("npm install of the harnesses failed");
}

/** Runs one prompt in one harness; resolves with its exit code and output (killed after PER_RUN_MS). */
async function runOnce(argv: string[], env: Record<string, string>, cwd: string) {
  const p = Bun.spawn(argv, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill("SIGKILL"), PER_RUN_MS);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

function baseEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ["PATH", "LANG", "LC_ALL", "TERM", "TZ"]) if (process.env[k]) env[k] = process.env[k]!;
  // The harness runs under a home of its own: none of this machine's logins, configs or histories.
  env.HOME = home;
  env.NO_PROXY = "127.0.0.1,localhost";
  return env;
}

/** What agent-shell itself returns for each case (the MCP text, before any harness touches it). */
async function direct(): Promise<Record<string, { chars: number; tokens: number; needles_visible: boolean }>> {
  const work = join(scratch, "direct");
  mkdirSync(work, { recursive: true });
  const s = await startServer({ cwd: work, stateDir: join(scratch, "direct-state") });
  const out: Record<string, { chars: number; tokens: number; needles_visible: boolean }> = {};
  try {
    for (const [name, command] of Object.entries(CASES)) {
      const r: any = await s.callRaw("bash", { command });
      const text = r.content.map((c: any) => c.text ?? "").join("\n");
      out[name] = { chars: text.length, tokens: tokens(text), needles_visible: missingNeedles(text, NEEDLES[name]!).length === 0 };
    }
  } finally {
    await s.close();
  }
  return out;
}

const report: any[] = [];
let own: Record<string, { chars: number; tokens: number; needles_visible: boolean }> = {};
try {
  own = await direct();
  await install();
  for (const h of harnesses) {
    if (only.length && !only.includes(h.name)) continue;
    const home = join(scratch, h.name, "home");
    const work = join(scratch, h.name, "work");
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    const model = startStandIn(CASES);
    const { argv, env } = h.prepare(home, work, model);
    const version = (await runOnce([bin(h.name), "--version"], { ...baseEnv(home), ...env }, work)).stdout.trim();
    const row: any = { harness: h.name, version, cases: {} };
    for (const name of Object.keys(CASES)) {
      log(`${h.name}: case ${name}`);
      const t0 = performance.now();
      const r = await runOnce(argv(`CASE:${name} Run the case's command with the shell's bash tool.`), { ...baseEnv(home), ...env }, work);
      const rec = model.results.get(name);
      row.cases[name] = rec
        ? {
            chars: rec.text.length,
            tokens: tokens(rec.text),
            needles_visible: missingNeedles(rec.text, NEEDLES[name]!).length === 0,
            head: rec.text.slice(0, 400),
            tail: rec.text.slice(-400),
            ms: Math.round(performance.now() - t0),
          }
        : { failed: `no tool result reached the model (exit ${r.code}); stderr: ${r.stderr.slice(-800)}; stdout: ${r.stdout.slice(-800)}`, requests: model.requests.slice(-20) };
      if (rec) writeFileSync(join(scratch, `${h.name}-${name}.txt`), rec.text);
      log(`${h.name}: ${name}: ${rec ? `${rec.text.length} chars, needles visible: ${row.cases[name].needles_visible}` : row.cases[name].failed}`);
    }
    const defs = [...model.toolDefinitions.values()][0];
    // Codex sends an MCP server's tools as one namespace holding them.
    if (defs) row.tool_definitions = { count: defs.reduce((n: number, d: any) => n + (Array.isArray(d.tools) ? d.tools.length : 1), 0), tokens: tokens(JSON.stringify(defs)) };
    model.stop();
    report.push(row);
  }
} finally {
  // Whatever a harness left running of agent-shell under this trial's dirs goes with it.
  for (const p of processes()) {
    if (!p.cmdline.includes(scratch) || p.pid === process.pid) continue;
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      /* gone meanwhile */
    }
  }
  if (!process.env.KEEP_TRIAL) rmSync(scratch, { recursive: true, force: true });
  else log(`kept ${scratch}`);
}

const fmt = (n: number) => n.toLocaleString("en-US");
const lines = [
  "| harness | short: chars / tokens | failing: chars / tokens | noisy build: chars / tokens | error line visible | agent-shell's tool definitions as sent |",
  "| --- | ---: | ---: | ---: | --- | ---: |",
];
for (const r of report) {
  const c = (n: string) => (r.cases[n]?.failed ? "failed" : `${fmt(r.cases[n].chars)} / ${fmt(r.cases[n].tokens)}`);
  const visible = r.cases.noisy?.failed ? "—" : r.cases.noisy.needles_visible ? "yes" : "no";
  lines.push(`| ${r.harness} ${r.version} | ${c("short")} | ${c("failing")} | ${c("noisy")} | ${visible} | ${r.tool_definitions ? `${r.tool_definitions.count} tools, ${fmt(r.tool_definitions.tokens)} tokens` : "—"} |`);
}
const c = (n: string) => `${fmt(own[n]?.chars ?? 0)} / ${fmt(own[n]?.tokens ?? 0)}`;
lines.push(`| (agent-shell's own MCP text, over the SDK client) | ${c("short")} | ${c("failing")} | ${c("noisy")} | ${own.noisy?.needles_visible ? "yes" : "no"} | |`);
const table = lines.join("\n");
console.log(table);
const out = process.env.BENCH_OUTPUT_JSON ?? resolve(import.meta.dir, only.length ? "harness-results.partial.json" : "harness-results.json");
writeFileSync(out, JSON.stringify({ machine: machine(), tokenizer: "o200k_base (gpt-tokenizer)", cases: CASES, agent_shell_direct: own, harnesses: report, table }, null, 2) + "\n");
log(`wrote ${out}`);
