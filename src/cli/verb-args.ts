import { printOut } from "./report.ts";
import { UsageError } from "./usage.ts";

/** One option of a verb: `--name VALUE` (string), `--flag` (boolean); strings may repeat. */
export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  /** Everything after `--` (or after the first positional when the verb takes a command). */
  command: string[];
}

/**
 * (Not node's util.parseArgs: it cannot stop at a verb's command, `run echo hi -n`, and
 * node:util imported into the one-file bundle costs every start of the binary ~10 ms.)
 * Parses `[options] [positionals] [-- CMD...]`. With `commandAfterPositional`, the first
 * non-option word starts the command (`run echo hi -n` runs `echo hi -n`); `--` always does.
 * Unknown options and missing values are usage errors naming the option.
 */
export function parseVerbArgs(verb: string, argv: string[], specs: OptionSpecs, opts: { commandAfterPositional?: boolean } = {}): ParsedArgs {
  const values: ParsedArgs["values"] = {};
  const positionals: string[] = [];
  const byShort = new Map(Object.entries(specs).flatMap(([name, s]) => (s.short ? [[s.short, name] as const] : [])));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return { values, positionals, command: argv.slice(i + 1) };
    if (!arg.startsWith("-") || arg === "-") {
      if (opts.commandAfterPositional) return { values, positionals, command: argv.slice(i) };
      positionals.push(arg);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
    } else {
      const short = byShort.get(arg.slice(1));
      if (!short) throw new UsageError(`${verb}: unknown option '${arg}' (see 'agent-shell ${verb} --help')`);
      name = short;
    }
    const spec = specs[name];
    if (!spec) throw new UsageError(`${verb}: unknown option '--${name}' (see 'agent-shell ${verb} --help')`);
    if (spec.type === "boolean") {
      if (inline !== undefined) throw new UsageError(`${verb}: option '--${name}' takes no value`);
      values[name] = true;
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`${verb}: option '--${name}' needs a value`);
    if (spec.multiple) values[name] = [...((values[name] as string[] | undefined) ?? []), value];
    else values[name] = value;
  }
  return { values, positionals, command: [] };
}

/** A whole number ≥ min from an option, or a usage error naming it. */
export function intOption(verb: string, name: string, value: unknown, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${verb}: --${name} must be a whole number ≥ ${min}, got '${value}'`);
  return n;
}

/** A number of seconds (fractions allowed) ≥ 0 from an option. */
export function secondsOption(verb: string, name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || String(value).trim() === "") throw new UsageError(`${verb}: --${name} must be a number of seconds ≥ 0, got '${value}'`);
  return n;
}

/** `K=V` pairs from repeated `--env`. */
export function envOption(verb: string, values: unknown): Record<string, string> {
  const env: Record<string, string> = {};
  for (const kv of (values as string[] | undefined) ?? []) {
    const eq = kv.indexOf("=");
    if (eq <= 0) throw new UsageError(`${verb}: --env needs KEY=VALUE, got '${kv}'`);
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return env;
}

/** The shell command a verb runs: one word is a shell command line; several are quoted as argv. */
export function commandLine(verb: string, words: string[]): string {
  if (words.length === 0) throw new UsageError(`${verb}: no command given (usage: agent-shell ${verb} [options] -- CMD...)`);
  if (words.length === 1) return words[0]!;
  return words.map(shellQuote).join(" ");
}

function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_\/.,:=@%+-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Prints a verb's help when asked; true if it did. */
export function maybeHelp(values: ParsedArgs["values"], help: string): boolean {
  if (!values.help) return false;
  printOut(help);
  return true;
}

/** Options every daemon-backed verb takes. */
export const COMMON_OPTIONS = {
  "state-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies OptionSpecs;
