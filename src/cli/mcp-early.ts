import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { Config } from "../config/schema.ts";
import { defaultStateDir } from "../background/state/state-dir.ts";
import { initializeAnswer } from "../mcp/server-identity.ts";
import { StdioTransport } from "../mcp/transports/stdio-transport.ts";
import { allowedRoots } from "../safety/paths.ts";
import { sandboxInstructions } from "../sandbox/describe.ts";
import { sandboxLevel } from "../sandbox/index.ts";
import { rememberedLevel, rememberLevel } from "../sandbox/level-memory.ts";
import { sandboxFromConfig } from "../sandbox/setup.ts";
import { configFlags, type HostFlags, parseHostFlags } from "./host-flags.ts";
import { defaultConfigFile, envName } from "../config/config-file.ts";
import { configDefaults } from "../config/defaults.ts" with { type: "macro" };
import { HTTP_FLAGS } from "./http-flags.ts";
import { within } from "../first-of.ts";

/** How long the start waits for the client's first message before loading the rest. */
const FIRST_MESSAGE_WAIT_MS = 20;

/**
 * `agent-shell mcp` on stdio answers `initialize` before the MCP SDK and the tools have
 * loaded (~50 ms of a start, most of it the SDK's schemas): what the answer says (the server,
 * its capabilities, the sandbox in words) needs only the configuration and the sandbox level,
 * which the last server on this boot remembered (sandbox/level-memory.ts) or the probe finds.
 * Returns the transport, already reading, for the server to take over; null where this
 * does not apply (`--http`, `--shared`, `--persist`, `--help`) or the configuration has a
 * problem, which the normal start then reports.
 */
export async function startStdioEarly(argv: string[], probing: Promise<void>): Promise<StdioTransport | null> {
  const { values } = parseHostFlags("mcp", argv, HTTP_FLAGS);
  if (values.help || values.shared || values.persist || (values as { http?: string }).http !== undefined) return null;
  const settings = onlyDefaults(values) ?? (await loadedConfig(values));
  const stateRoot = resolve(settings.state_dir ?? defaultStateDir());
  const contained = settings.sandbox !== "off";
  const known = contained ? rememberedLevel(stateRoot) : null;
  if (contained) {
    if (!known) await probing;
    void probing.then(() => rememberLevel(stateRoot, sandboxLevel()));
  }
  const roots = allowedRoots(realpathSync(resolve(values.cwd ?? process.cwd())), settings.allowed_paths);
  const sandbox = sandboxFromConfig(settings, { mode: settings.sandbox, allowedRoots: roots, stateRoot, defaultStateRoot: defaultStateDir(), knownLevel: known ?? undefined });
  const instructions = sandboxInstructions(sandbox);
  const transport = new StdioTransport();
  // A client sends initialize as it starts us: it is most often there to be read. Loading the
  // rest holds the event loop, so the answer leaves first; a client that waits longer to
  // ask is answered once all has loaded, as it would have been.
  await within(transport.answerEarly((message) => initializeAnswer(message, instructions)), FIRST_MESSAGE_WAIT_MS);
  return transport;
}

const DEFAULTS = configDefaults();

/**
 * The configuration when nothing sets a key but `--state-dir` (most servers a harness
 * starts): the defaults, with no schema built; else null, and the configuration is loaded.
 */
function onlyDefaults(values: HostFlags): Config | null {
  const flags = configFlags(values);
  if (values.config !== undefined || Object.keys(flags).some((k) => k !== "state_dir")) return null;
  if (DEFAULTS.keys.some((k) => process.env[envName(k)])) return null;
  if (existsSync(defaultConfigFile(process.env))) return null;
  return { ...DEFAULTS.config, ...flags } as Config;
}

/** The configuration as every server loads it (zod's settings first: main.ts loads them after this file). */
async function loadedConfig(values: HostFlags): Promise<Config> {
  await import("../zod-jitless.ts");
  return (await import("./host-options.ts")).hostOptions(values).config as Config; // (loaded whole)
}
