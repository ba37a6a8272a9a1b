import { loadConfig } from "../config/load.ts";
import { configFlags, parseHostFlags } from "./host-options.ts";
import { UsageError } from "./usage.ts";

/** `agent-shell config show [--config FILE] [--json]`: every key, its value and its source. */
export async function configCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseHostFlags("config", argv);
  if (positionals[0] !== "show" || positionals.length > 1) {
    throw new UsageError("usage: agent-shell config show [--config FILE] [--json] [same flags as mcp]");
  }
  const { config, sources } = loadConfig({ configFile: values.config, flags: configFlags(values) });
  const keys = Object.keys(sources) as Array<keyof typeof config>;
  if (values.json) {
    const out = Object.fromEntries(keys.map((k) => [k, { value: config[k] ?? null, source: sources[k] }]));
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    return 0;
  }
  const rows = keys.map((k) => [k, config[k] === undefined ? "(unset)" : JSON.stringify(config[k]), sources[k]]);
  const width = [0, 1].map((i) => Math.max(...rows.map((r) => r[i]!.length), i ? 5 : 3));
  const line = (r: string[]) => `${r[0]!.padEnd(width[0]!)}  ${r[1]!.padEnd(width[1]!)}  ${r[2]}`;
  process.stdout.write([line(["KEY", "VALUE", "SOURCE"]), ...rows.map(line)].join("\n") + "\n");
  return 0;
}
