import { needsParser, parserReady } from "../safety/parser/bash-parser.ts";
import type { Task } from "../background/tasks/task.ts";
import { PlainLines } from "./plain-lines.ts";
import type { OutputStream } from "../background/output/stream.ts";
import { ToolHost } from "../host/tool-host.ts";
import { hostOptions } from "./host-options.ts";
import { confirmOnTerminal } from "./prompt.ts";
import { commandQuestion } from "../safety/confirmation/person-confirmation.ts";
import { exitStatus, reportError, writeAll } from "./report.ts";
import { Spinner } from "./terminal.ts";
import { commandLine, envOption, intOption, maybeHelp, parseVerbArgs } from "./verb-args.ts";
import { secretVariables } from "../runtime/env.ts";

export const RUN_HELP = `Usage: agent-shell run [options] -- CMD...

Run a command in the foreground, in this process (no daemon), with its output streamed
live: stdout to stdout, stderr to stderr. Exits with the command's exit code; 124 when
--timeout passes, 128+N when signal N ended it, 130 after Ctrl-C (which kills the
command's whole process group), 125 when it could not run at all.
One word after -- is a shell command line; several words are quoted and run as they are.

Options:
  --timeout S        kill the command (and everything it started) after S seconds (default: no limit)
  --cwd DIR          run in DIR (default: the current directory; with --host: that host's home)
  --host NAME        run on that configured host (SSH, container or exec)
  --env K=V          add an environment variable (repeatable)
  --tty              run under a pseudo-terminal (stdout and stderr merged)
  --allow DIR        also allow DIR as a working directory (repeatable)
  --yes              run a command that needs confirmation without asking
  --config FILE      configuration file (default: $XDG_CONFIG_HOME/agent-shell/config.toml)
  --sandbox MODE     workspace-write (default), read-only or off: the OS sandbox around the command
  --state-dir DIR    where long output is spooled (default: $AGENT_SHELL_STATE_DIR, $XDG_STATE_HOME/agent-shell)

Examples:
  agent-shell run -- npm test
  agent-shell run --timeout 60 -- 'make -j4 && ./run-tests'
  agent-shell run --env CI=1 --cwd ./web -- npx playwright test
`;

/** Longest foreground limit when no --timeout is given (setTimeout's ceiling is ~24.8 days). */
const NO_LIMIT_SECONDS = 2_000_000;

/** `agent-shell run -- CMD...`: foreground, in-process, output streamed as it arrives. */
export async function runCommand(argv: string[]): Promise<number> {
  const { values, command } = parseVerbArgs(
    "run",
    argv,
    {
      timeout: { type: "string" },
      cwd: { type: "string" },
      host: { type: "string" },
      env: { type: "string", multiple: true },
      tty: { type: "boolean" },
      allow: { type: "string", multiple: true },
      yes: { type: "boolean" },
      config: { type: "string" },
      "state-dir": { type: "string" },
      sandbox: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    { commandAfterPositional: true },
  );
  if (maybeHelp(values, RUN_HELP)) return 0;
  const timeout = intOption("run", "timeout", values.timeout, 1);
  const line = commandLine("run", command);

  // On another host --cwd names a directory there, not this process's working directory.
  const remote = values.host as string | undefined;
  // A person's own local command keeps the person's credentials (a server's children do not inherit them: SPEC §20).
  const env = { ...(remote === undefined ? secretVariables(process.env) : {}), ...envOption("run", values.env) };
  const host = new ToolHost({
    ...hostOptions({
      cwd: remote === undefined ? (values.cwd as string | undefined) : undefined,
      allow: values.allow as string[] | undefined,
      config: values.config as string | undefined,
      "state-dir": values["state-dir"] as string | undefined,
      sandbox: values.sandbox as string | undefined,
    }),
    // Run from a person's terminal: its environment is already theirs.
    userShell: false,
    confirmationPolicy: {
      kind: "ask",
      ask: (question) => confirmOnTerminal(values.yes as boolean | undefined, interrupted.signal)(question),
    },
  });
  const interrupted = new AbortController();
  let signalled: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    signalled ??= sig;
    interrupted.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  // A terminal user sees a spinner only while a slow command stays silent (and never over a prompt).
  const spinner = new Spinner(`running ${line}`);
  let streamed = false;
  try {
    const call = (extra: Record<string, unknown>) => host.call(
      "bash",
      {
        ...extra,
        command: line,
        timeout_seconds: timeout ?? NO_LIMIT_SECONDS,
        ...(Object.keys(env).length ? { env } : {}),
        ...(values.tty ? { tty: true } : {}),
        ...(remote !== undefined ? { host: remote, ...(values.cwd !== undefined ? { working_directory: values.cwd } : {}) } : {}),
      },
      {
        signal: interrupted.signal,
        connection: { client: "agent-shell run", transport: "cli" },
        onTask: (task) => {
          streamed = true;
          streamLive(task, spinner);
          if (task.stdout.total + task.stderr.total === 0) spinner.start(1000);
        },
      },
    );
    let result = await call({});
    // A far-side host asks for its own confirmation: ask here, then repeat the call confirmed.
    if (result.needs_confirmation === true) {
      if (needsParser(line)) await parserReady();
      const question = commandQuestion(line, { cwd: (values.cwd as string | undefined) ?? (remote !== undefined ? "~" : process.cwd()), host: remote });
      if (!(await confirmOnTerminal(values.yes as boolean | undefined, interrupted.signal)(question))) {
        return reportError("command cancelled: it needs confirmation (answer y at the prompt, or pass --yes when there is no terminal)", 1);
      }
      result = await call({ confirmed: true });
    }
    spinner.stop();
    if (signalled) return signalled === "SIGINT" ? 130 : signalled === "SIGTERM" ? 143 : 129;
    if (result.error_code === "TIMEOUT") {
      reportError(`command timed out after ${timeout} s; its process group was killed`);
      return 124;
    }
    if (result.error) return reportError(result, 125);
    // A far-side host answers with the whole output at the end (nothing streamed here).
    if (!streamed) {
      if (typeof result.stdout === "string") writeAll(1, new TextEncoder().encode(result.stdout));
      if (typeof result.stderr === "string") writeAll(2, new TextEncoder().encode(result.stderr));
    }
    return exitStatus(result);
  } finally {
    spinner.stop();
    await host.close();
  }
}

/** Copies a task's output to our stdout/stderr as it arrives (what it already has first). */
function streamLive(task: Task, spinner: Spinner): void {
  if (task.rawOutput) return streamTerminal(task.rawOutput, task, spinner);
  for (const [stream, fd] of [
    [task.stdout, 1],
    [task.stderr, 2],
  ] as const) {
    const before = stream.total;
    if (before > 0) writeAll(fd, stream.read(0, before) ?? new Uint8Array(0));
    stream.onData((chunk) => {
      spinner.stop();
      writeAll(fd, chunk);
    });
  }
}

/**
 * A tty task streams its terminal bytes: straight through when our stdout is a terminal
 * (colours, progress bars, redraws), else as plain lines the moment each is complete.
 */
function streamTerminal(raw: OutputStream, task: Task, spinner: Spinner): void {
  const lines = process.stdout.isTTY ? null : new PlainLines();
  const write = (chunk: Uint8Array) => {
    spinner.stop();
    if (!lines) return writeAll(1, chunk);
    const text = lines.push(chunk);
    if (text) writeAll(1, new TextEncoder().encode(text));
  };
  const before = raw.total;
  if (before > 0) write(raw.read(0, before) ?? new Uint8Array(0));
  raw.onData(write);
  if (lines) void task.ended.then(() => writeAll(1, new TextEncoder().encode(lines.flush())));
}
