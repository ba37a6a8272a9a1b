import { isSecretName } from "../runtime/env.ts";
import { takeShellSnapshot } from "../runtime/shell-snapshot/shell-snapshot.ts";
import { UsageError } from "./usage.ts";

export const SHELL_HELP = `Usage: agent-shell shell check [--json]

Runs your login shell ($SHELL, bash or zsh) as agent-shell does once per server, and prints
what local commands start from: the names of the exported variables (never their values;
secret-named ones are left out unless env_passthrough names them), aliases, functions and
shell options, and how long the shell took to start. Exit 1 when it could not be captured.
Turn it off with shell_snapshot = false (or AGENT_SHELL_SHELL_SNAPSHOT=false).
`;

/** `agent-shell shell check [--json]`: what the shell snapshot holds, by name. */
export async function shellCommand(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(SHELL_HELP);
    return 0;
  }
  const json = argv.includes("--json");
  const rest = argv.filter((a) => a !== "--json");
  if (rest[0] !== "check" || rest.length > 1) throw new UsageError("usage: agent-shell shell check [--json]");
  const snapshot = await takeShellSnapshot();
  const names = Object.keys(snapshot.env).sort();
  const report = {
    shell: snapshot.shell,
    took_ms: snapshot.tookMs,
    ok: snapshot.failure === null,
    ...(snapshot.failure ? { failure: snapshot.failure } : {}),
    variables: names.filter((n) => !isSecretName(n)),
    secret_named_left_out: names.filter(isSecretName),
    aliases: snapshot.aliases,
    functions: snapshot.functions,
    options: snapshot.options,
  };
  if (json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else {
    const list = (label: string, items: string[]) => `${label} (${items.length}): ${items.length ? items.join(" ") : "-"}\n`;
    process.stdout.write(
      `shell: ${snapshot.shell} (${snapshot.failure ? `not captured: ${snapshot.failure}` : `captured in ${snapshot.tookMs} ms`})\n` +
        list("variables", report.variables) +
        list("secret-named, left out", report.secret_named_left_out) +
        list("aliases", report.aliases) +
        list("functions", report.functions) +
        list("options", report.options),
    );
  }
  return snapshot.failure ? 1 : 0;
}
