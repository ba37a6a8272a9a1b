#!/usr/bin/env bun
/**
 * Entry point of the `agent-shell` executable. Heavy modules load lazily per verb.
 *
 * The compiled bundle evaluates every Node built-in that any module imports at the top, at
 * every start, whatever the verb. Stream-based ones (node:net, node:readline, node:crypto,
 * process.stdin) cost milliseconds each, so they are imported where they are used
 * (tests/package/startup-imports.test.ts keeps it so).
 */
import { HELP, UsageError } from "./cli/usage.ts";
import { VERSION } from "./version.ts";

async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  switch (verb) {
    case "--version":
    case "-V":
    case "version":
      await Bun.write(Bun.stdout, `agent-shell ${VERSION}\n`);
      return 0;
    case undefined:
    case "--help":
    case "-h":
    case "help":
      await Bun.write(Bun.stdout, HELP);
      return verb === undefined ? 2 : 0;
  }
  if (verb === "mcp") {
    // The sandbox probe's processes run while the server's modules load; initialize is
    // answered before they have (cli/mcp-early.ts: it parses nothing with zod, which loads after).
    const probing = (await import("./sandbox/index.ts")).primeSandboxLevel().catch(() => {});
    const early = await (await import("./cli/mcp-early.ts")).startStdioEarly(rest, probing).catch(() => null);
    await import("./zod-jitless.ts");
    const { mcpCommand } = await import("./cli/mcp.ts");
    await probing;
    return mcpCommand(rest, early ?? undefined);
  }
  await import("./zod-jitless.ts");
  switch (verb) {
    case "call": {
      const { callCommand } = await import("./cli/call.ts");
      return callCommand(rest);
    }
    case "config": {
      const { configCommand } = await import("./cli/config-show.ts");
      return configCommand(rest);
    }
    case "run":
      return (await import("./cli/run.ts")).runCommand(rest);
    case "start":
      return (await import("./cli/start.ts")).startCommand(rest);
    case "ps":
      return (await import("./cli/ps.ts")).psCommand(rest);
    case "logs":
      return (await import("./cli/logs.ts")).logsCommand(rest);
    case "wait":
      return (await import("./cli/wait.ts")).waitCommand(rest);
    case "kill":
      return (await import("./cli/kill.ts")).killCommand(rest);
    case "hosts":
      return (await import("./cli/hosts.ts")).hostsCommand(rest);
    case "rules":
      return (await import("./cli/rules.ts")).rulesCommand(rest);
    case "audit":
      return (await import("./cli/audit.ts")).auditCommand(rest);
    case "sandbox":
      return (await import("./cli/sandbox-check.ts")).sandboxCommand(rest);
    case "shell":
      return (await import("./cli/shell-check.ts")).shellCommand(rest);
    case "restart":
      return (await import("./cli/restart.ts")).restartCommand(rest);
    case "up":
      return (await import("./cli/up.ts")).upCommand(rest);
    case "down":
      return (await import("./cli/down.ts")).downCommand(rest);
    case "daemon":
      return (await import("./cli/daemon.ts")).daemonCommand(rest);
    default:
      throw new UsageError(`unknown command '${verb}'. Run 'agent-shell --help' for the list of commands.`);
  }
}

try {
  const code = await main(process.argv.slice(2));
  process.exit(code);
} catch (e) {
  const err = e as Error | undefined;
  // Usage and configuration mistakes exit 2; a busy state dir is a runtime refusal (1).
  if (err instanceof UsageError || err?.name === "ConfigError" || err?.name === "OwnerBusyError" || err?.name === "UnsafeStateDirError") {
    process.stderr.write(`agent-shell: ${err.message}\n`);
    process.exit(err.name === "OwnerBusyError" || err.name === "UnsafeStateDirError" ? 1 : 2);
  }
  process.stderr.write(`agent-shell: ${(e as Error | undefined)?.stack ?? String(e)}\n`);
  process.exit(1);
}
