import { resolve } from "node:path";
import { callConfirmed } from "./confirm.ts";
import { withDaemon } from "./daemon-client.ts";
import { forwardedEnv } from "./forwarded-env.ts";
import { printJson, printOut, reportError } from "./report.ts";
import { commandLine, envOption, intOption, maybeHelp, parseVerbArgs, secondsOption } from "./verb-args.ts";
import { SANDBOX_MODES, type SandboxMode } from "../sandbox/policy.ts";
import { UsageError } from "./usage.ts";

/** A --sandbox value, checked here so a typo exits 2 before the daemon is involved. */
function sandboxMode(verb: string, value: string): SandboxMode {
  if ((SANDBOX_MODES as readonly string[]).includes(value)) return value as SandboxMode;
  throw new UsageError(`${verb}: --sandbox must be one of ${SANDBOX_MODES.join(", ")}, got '${value}'`);
}

export const START_HELP = `Usage: agent-shell start [options] -- CMD...

Start a background task in the per-user daemon (started automatically) and print its id
on stdout (everything else goes to stderr). The task keeps running after this command
returns; see it with 'ps', read it with 'logs', wait for it with 'wait', stop it with 'kill'.
With --ready-port, --ready-pattern or --ready-url, return only once it is ready; if it exits
or times out first, exit non-zero with the end of its output, and nothing is left running.

Options:
  --name NAME            a service name; while a task of that name runs, its id is printed
                         again instead of starting a duplicate
  --restart              with --name: kill the running task of that name and start afresh
  --ready-port P         ready when TCP port P accepts connections
  --ready-pattern RE     ready when a line of output matches the regular expression RE
  --ready-url URL        ready when a GET of URL answers 2xx or 3xx
  --ready-timeout S      give up waiting for readiness after S seconds (default: 60)
  --restart-on WHEN      'failure' or 'always': when it exits, start it again in place (same id);
                         a kill never restarts it
  --max-restarts N       with --restart-on: at most N automatic restarts (default: unlimited)
  --restart-delay S      with --restart-on: seconds before a restart, doubled on quick
                         successive failures up to 30 (default: 1)
  --tty                  run under a pseudo-terminal
  --cwd DIR              run in DIR (default: the current directory; with --host: that host's home)
  --host NAME            start it on that configured host (far-side hosts: its id is NAME:bg-N)
  --env K=V              add an environment variable (repeatable; the task also gets this
                         shell's environment)
  --yes                  start a command that needs confirmation without asking
  --json                 print the whole result as JSON instead of the id
  --sandbox MODE         workspace-write, read-only or off for this task (looser than the
                         daemon's asks first; default: the daemon's)
  --state-dir DIR        the daemon's state dir (default: $AGENT_SHELL_STATE_DIR,
                         $XDG_STATE_HOME/agent-shell)

Examples:
  agent-shell start --name web --ready-port 8000 -- python3 -m http.server 8000
  id=$(agent-shell start -- ./long-build.sh) && agent-shell wait "$id"
  agent-shell start --name api --restart --ready-pattern 'listening on' -- npm run dev
  agent-shell start --name worker --restart-on failure --max-restarts 5 -- ./worker.sh
`;


/** `agent-shell start -- CMD...`: a background task in the daemon; prints its id. */
export async function startCommand(argv: string[]): Promise<number> {
  const { values, command } = parseVerbArgs(
    "start",
    argv,
    {
      name: { type: "string" },
      restart: { type: "boolean" },
      "ready-port": { type: "string" },
      "ready-pattern": { type: "string" },
      "ready-timeout": { type: "string" },
      "ready-url": { type: "string" },
      "restart-on": { type: "string" },
      "max-restarts": { type: "string" },
      "restart-delay": { type: "string" },
      tty: { type: "boolean" },
      cwd: { type: "string" },
      host: { type: "string" },
      env: { type: "string", multiple: true },
      yes: { type: "boolean" },
      json: { type: "boolean" },
      "state-dir": { type: "string" },
      sandbox: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    { commandAfterPositional: true },
  );
  if (maybeHelp(values, START_HELP)) return 0;
  const line = commandLine("start", command);
  const readyPort = intOption("start", "ready-port", values["ready-port"], 1);
  const readyTimeout = secondsOption("start", "ready-timeout", values["ready-timeout"]);
  if (values.restart && !values.name) return reportError("start: --restart needs --name", 2);
  const restartOn = values["restart-on"] as string | undefined;
  if (restartOn !== undefined && restartOn !== "failure" && restartOn !== "always") {
    return reportError(`start: --restart-on must be 'failure' or 'always', got '${restartOn}'`, 2);
  }
  const maxRestarts = intOption("start", "max-restarts", values["max-restarts"], 0);
  const restartDelay = secondsOption("start", "restart-delay", values["restart-delay"]);
  if (restartOn === undefined && (maxRestarts !== undefined || restartDelay !== undefined)) {
    return reportError("start: --max-restarts and --restart-delay need --restart-on failure|always", 2);
  }
  const name = values.name as string | undefined;
  // On another host: its own environment and home, plus only what --env and --cwd say.
  const remote = values.host as string | undefined;
  const forwarded = remote === undefined ? forwardedEnv() : {};
  const cwd = remote === undefined ? resolve((values.cwd as string | undefined) ?? process.cwd()) : (values.cwd as string | undefined);
  const args: Record<string, unknown> = {
    command: line,
    run_in_background: true,
    ...(cwd !== undefined ? { working_directory: cwd } : {}),
    ...(remote !== undefined ? { host: remote } : {}),
    env: { ...forwarded, ...envOption("start", values.env) },
    ...(name !== undefined ? { name } : {}),
    ...(readyPort !== undefined ? { ready_port: readyPort } : {}),
    ...(values["ready-pattern"] !== undefined ? { ready_pattern: values["ready-pattern"] } : {}),
    ...(values["ready-url"] !== undefined ? { ready_url: values["ready-url"] } : {}),
    ...(restartOn !== undefined ? { restart_on: restartOn } : {}),
    ...(maxRestarts !== undefined ? { max_restarts: maxRestarts } : {}),
    ...(restartDelay !== undefined ? { restart_delay_seconds: restartDelay } : {}),
    ...(readyTimeout !== undefined ? { ready_timeout_seconds: Math.max(1, Math.ceil(readyTimeout)) } : {}),
    ...(values.tty ? { tty: true } : {}),
    ...(values.sandbox !== undefined ? { sandbox: sandboxMode("start", values.sandbox as string) } : {}),
  };
  const waitMs = ((readyTimeout ?? 60) + 60) * 1000;
  return withDaemon(values["state-dir"], async (client) => {
    if (values.restart && name !== undefined) {
      const list = await client.call("task_list", { status: "running", ...(remote !== undefined ? { host: remote } : {}) });
      for (const t of (list.tasks as Array<{ task_id: string; name?: string }>) ?? []) {
        if (t.name === name) await client.call("kill_shell", { task_id: t.task_id });
      }
    }
    const result = await callConfirmed(client, "bash", args, values.yes === true, waitMs);
    if (values.json) printJson(result);
    if (result.error) {
      if (!values.json) {
        reportError(result);
        const ctx = (result.context ?? {}) as Record<string, unknown>;
        for (const stream of ["stdout", "stderr"] as const) {
          const text = typeof ctx[stream] === "string" ? (ctx[stream] as string) : "";
          if (text) process.stderr.write(`--- ${stream} (last lines) ---\n${text.split("\n").slice(-20).join("\n")}${text.endsWith("\n") ? "" : "\n"}`);
        }
      }
      return result.error_code === "TIMEOUT" ? 124 : 1;
    }
    if (!values.json) {
      if (result.already_running) process.stderr.write(`agent-shell: '${name}' is already running as ${result.task_id}\n`);
      printOut(`${result.task_id}\n`);
    }
    return 0;
  });
}
