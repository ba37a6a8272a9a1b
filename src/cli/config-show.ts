import { loadConfig } from "../config/load.ts";
import { configFlags, parseHostFlags } from "./host-flags.ts";
import { UsageError } from "./usage.ts";
import { CONFIG_HELP } from "./host-help.ts";
import { defaultStateDir } from "../background/state/state-dir.ts";
import { defaultMaxStateBytes } from "../background/output/state-budget.ts";
import { sandboxLevel } from "../sandbox/index.ts";
import { takeShellSnapshot } from "../runtime/shell-snapshot/shell-snapshot.ts";
import { networkMode } from "../sandbox/setup.ts";
import { DEFAULT_ALLOW } from "../sandbox/network/rules.ts";
import { makeWritableHomes } from "../sandbox/roots.ts";

/** `agent-shell config show [--config FILE] [--json]`: every key, its value and its source. */
export async function configCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseHostFlags("config", argv);
  if (values.help) {
    process.stdout.write(CONFIG_HELP);
    return 0;
  }
  if (positionals[0] !== "show" || positionals.length > 1) {
    throw new UsageError("usage: agent-shell config show [--config FILE] [--json] [same flags as mcp]");
  }
  const { config, sources } = loadConfig({ configFile: values.config, flags: configFlags(values) });
  const keys = Object.keys(sources) as Array<keyof typeof config>;
  // The mode actually in force: the default falls back to off, loudly, where it cannot be enforced.
  const level = sandboxLevel();
  const shown: Record<string, unknown> = { ...config };
  // The state dir in use even when nothing sets it: the default.
  if (config.state_dir === undefined) shown.state_dir = defaultStateDir();
  if (config.max_state_bytes === undefined) shown.max_state_bytes = defaultMaxStateBytes(String(shown.state_dir));
  if (config.sandbox === undefined) shown.sandbox = level.level ? "workspace-write" : `unavailable (running unsandboxed: ${level.missing})`;
  // The network mode in force (SPEC §21), and the names allowed without being listed.
  if (config.network === undefined) shown.network = networkMode(config);
  const extraRows: Array<[string, unknown, string]> = [
    ["sandbox_level", level.level ?? "none", "detected"],
    // (The table gives the count; `--json` and `sandbox check` list them.)
    ["network_allow_built_in", !config.network_allow_defaults ? [] : values.json ? DEFAULT_ALLOW : `${DEFAULT_ALLOW.length} registries and code hosts (sandbox check lists them)`, "built in"],
  ];
  // A sandbox_writable entry that is missing is made; one that cannot be is named here, never dropped in silence.
  const unmade = config.sandbox === "off" ? [] : makeWritableHomes(config.sandbox_writable);
  if (unmade.length) extraRows.push(["sandbox_writable_not_in_force", unmade, "checked"]);
  // What commands start from: the user's shell, or why not (SPEC §23).
  if (config.shell_snapshot) {
    const shell = await takeShellSnapshot();
    const held = `${Object.keys(shell.env).length} variables, ${shell.aliases.length} aliases, ${shell.functions.length} functions`;
    extraRows.push(["shell", shell.failure ? `${shell.shell}: not captured (${shell.failure}); commands start from the server's environment` : `${shell.shell}: ${held} (${shell.tookMs} ms)`, "detected"]);
  }
  if (values.json) {
    const out = Object.fromEntries([
      ...keys.map((k) => [k, { value: shown[k] ?? null, source: sources[k] }]),
      ...extraRows.map(([k, v, src]) => [k, { value: v, source: src }]),
    ]);
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    return 0;
  }
  const rows = [
    ...keys.map((k) => [k, shown[k] === undefined ? "(unset)" : JSON.stringify(shown[k]), sources[k]]),
    ...extraRows.map(([k, v, src]) => [k, JSON.stringify(v), src]),
  ];
  const width = [0, 1].map((i) => Math.max(...rows.map((r) => r[i]!.length), i ? 5 : 3));
  const line = (r: string[]) => `${r[0]!.padEnd(width[0]!)}  ${r[1]!.padEnd(width[1]!)}  ${r[2]}`;
  process.stdout.write([line(["KEY", "VALUE", "SOURCE"]), ...rows.map(line)].join("\n") + "\n");
  return 0;
}
