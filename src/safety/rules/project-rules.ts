/**
 * A project's own rules: `.agent-shell.toml` in the server's working directory, read only
 * once the person has trusted it (`agent-shell rules trust`), and ignored again as soon as
 * its content changes, so that a command cannot write itself a rule (SPEC §22). The trusted
 * digests are kept in agent-shell's config folder, which every sandbox holds read-only.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { compileRules, type Rule, RuleSchema } from "./rules.ts";

export const PROJECT_RULES_FILE = ".agent-shell.toml";

const ProjectFileSchema = z.object({ rules: z.array(RuleSchema).default([]) }).strict();

export type ProjectRules = { file: string; status: "none" | "untrusted" | "changed" | "trusted" | "invalid"; rules: Rule[]; problem?: string };

function trustStore(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "agent-shell", "trusted-projects.json");
}

const digest = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

function trusted(env?: NodeJS.ProcessEnv): Record<string, string> {
  try {
    return JSON.parse(readFileSync(trustStore(env), "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}

/** Reads and checks a rules file; throws an Error naming the file and the key at fault. */
export function readRulesFile(file: string, bytes: Uint8Array = readFileSync(file)): Rule[] {
  let data: unknown;
  try {
    data = Bun.TOML.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new Error(`invalid TOML in ${file}: ${(e as Error).message}`);
  }
  const parsed = ProjectFileSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`invalid value for '${issue.path.map(String).join(".")}' in ${file}: ${issue.message}`);
  }
  return compileRules(parsed.data.rules, file);
}

/** Trusts the project file as it is now; returns its rules (throws when it is missing or invalid). */
export function trustProject(dir: string, env?: NodeJS.ProcessEnv): { file: string; rules: Rule[] } {
  const file = join(dir, PROJECT_RULES_FILE);
  const bytes = readFileSync(file);
  const rules = readRulesFile(file, bytes);
  const store = trustStore(env);
  mkdirSync(join(store, ".."), { recursive: true, mode: 0o700 });
  const all = { ...trusted(env), [file]: digest(bytes) };
  writeFileSync(store + ".tmp", JSON.stringify(all, null, 2) + "\n", { mode: 0o600 });
  renameSync(store + ".tmp", store);
  return { file, rules };
}

/** What was last read, kept while the file's status is unchanged (ctime cannot be set back by a command). */
let last: { key: string; result: ProjectRules } | null = null;

/** The project's rules, when its file is trusted as it is now. */
export function projectRules(dir: string, env?: NodeJS.ProcessEnv): ProjectRules {
  const file = join(dir, PROJECT_RULES_FILE);
  let key: string;
  try {
    const s = statSync(file);
    key = `${file}\0${s.ino}\0${s.size}\0${s.ctimeMs}\0${s.mtimeMs}\0${trustedStamp(env)}`;
  } catch {
    return { file, status: "none", rules: [] };
  }
  if (last?.key === key) return last.result;
  const result = readProject(file, env);
  last = { key, result };
  return result;
}

function trustedStamp(env?: NodeJS.ProcessEnv): string {
  try {
    const s = statSync(trustStore(env));
    return `${s.ino}:${s.ctimeMs}`;
  } catch {
    return "";
  }
}

function readProject(file: string, env?: NodeJS.ProcessEnv): ProjectRules {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch {
    return { file, status: "none", rules: [] };
  }
  const want = trusted(env)[file];
  if (want === undefined) return { file, status: "untrusted", rules: [] };
  if (want !== digest(bytes)) return { file, status: "changed", rules: [] };
  try {
    return { file, status: "trusted", rules: readRulesFile(file, bytes) };
  } catch (e) {
    return { file, status: "invalid", rules: [], problem: (e as Error).message };
  }
}
