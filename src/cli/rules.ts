import { loadConfig } from "../config/load.ts";
import { parserReady } from "../safety/parser/bash-parser.ts";
import { decideLine } from "../safety/rules/decide.ts";
import { projectRules, readRulesFile, trustProject } from "../safety/rules/project-rules.ts";
import { compileRules, type Rule } from "../safety/rules/rules.ts";
import { UsageError } from "./usage.ts";
import { parseVerbArgs } from "./verb-args.ts";

const HELP = `usage:
  agent-shell rules check [--json] [--config FILE] -- COMMAND...   the decision for a command line, per simple command
  agent-shell rules test [--config FILE] [RULES_FILE]               run the [[rules.examples]] of the rules in force (or of RULES_FILE)
  agent-shell rules trust [DIR]                                     trust DIR/.agent-shell.toml as it is now (default: .)
`;

/** `agent-shell rules check|test|trust` (SPEC §22). */
export async function rulesCommand(argv: string[]): Promise<number> {
  const parsed = parseVerbArgs("rules", argv, { json: { type: "boolean" }, config: { type: "string" }, help: { type: "boolean", short: "h" } });
  const values = parsed.values as { json?: boolean; config?: string; help?: boolean };
  const [verb, ...rest] = [...parsed.positionals, ...parsed.command];
  if (values.help || verb === undefined) {
    process.stdout.write(HELP);
    return verb === undefined && !values.help ? 2 : 0;
  }
  if (verb === "trust") {
    const { file, rules } = trustProject(rest[0] ?? process.cwd());
    process.stdout.write(`Trusted ${file} as it is now (${rules.length} rule${rules.length === 1 ? "" : "s"}); a change to it is ignored until trusted again.\n`);
    return 0;
  }
  await parserReady();
  if (verb === "check") {
    if (rest.length === 0) throw new UsageError("usage: agent-shell rules check [--json] -- COMMAND...");
    const line = rest.join(" ");
    const d = decideLine(line, rulesInForce(values.config), { cwd: process.cwd() });
    if (values.json) {
      const commands = d.items.map((i) => ({ command: i.command, decision: i.decision, by: i.by, ...(i.what ? { what: i.what } : {}) }));
      process.stdout.write(JSON.stringify({ command: line, decision: d.decision, ...(d.deciding ? { by: d.deciding.by } : {}), commands }, null, 2) + "\n");
    } else {
      for (const i of d.items) process.stdout.write(`${i.decision.padEnd(5)}  ${oneLine(i.command)}  (${i.by}${i.what ? `: ${i.what}` : ""})\n`);
      process.stdout.write(`decision: ${d.decision}\n`);
    }
    return 0;
  }
  if (verb === "test") {
    const rules = rest[0] ? readRulesFile(rest[0]) : rulesInForce(values.config);
    let failed = 0;
    let run = 0;
    for (const rule of rules) {
      for (const example of rule.examples ?? []) {
        run++;
        const got = decideLine(example.command, rules, { cwd: process.cwd() });
        const ok = got.decision === example.decision;
        if (!ok) failed++;
        process.stdout.write(`${ok ? "ok  " : "FAIL"}  ${oneLine(example.command)}: expected ${example.decision}, got ${got.decision}${ok ? "" : ` (${got.deciding?.by ?? "nothing asks or denies"})`}\n`);
      }
    }
    process.stdout.write(`${run - failed} of ${run} examples passed\n`);
    return failed ? 1 : 0;
  }
  throw new UsageError(`unknown rules command '${verb}'\n${HELP}`);
}

/** The config's rules, then the project's when trusted (a note on stderr when it is not). */
function rulesInForce(configFile: string | undefined): Rule[] {
  const { config } = loadConfig({ configFile });
  const project = projectRules(process.cwd());
  if (project.status === "untrusted" || project.status === "changed") {
    process.stderr.write(`note: ${project.file} is ${project.status === "changed" ? "changed since it was trusted" : "not trusted"}: its rules are ignored (agent-shell rules trust)\n`);
  } else if (project.status === "invalid") process.stderr.write(`note: ${project.problem}\n`);
  return [...compileRules(config.rules, "config"), ...project.rules];
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, " ⏎ ");
