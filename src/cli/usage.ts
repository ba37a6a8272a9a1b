/** Usage errors exit with code 2 and a message on stderr. */
export class UsageError extends Error {}

export const HELP = `agent-shell — a safe, fast shell for coding agents

Usage:
  agent-shell mcp [--cwd DIR] [--allow DIR]... [--timeout S] [--config FILE]
                  [--agent-command CMD] [--state-dir DIR] [--persist|--shared] [--sandbox MODE]
        Serve the tools over MCP on stdio (--persist: a registry that survives restarts),
        or over Streamable HTTP with --http [HOST:]PORT [--token-file FILE] (see mcp --help).
  agent-shell call TOOL [JSON|-] [--yes] [same flags as mcp]
        One tool call; prints the result JSON. Exit 0, 1 if the result is an error,
        2 on usage errors.
  agent-shell run [--timeout S] [--cwd DIR] [--env K=V]... [--tty] [--sandbox MODE] -- CMD...
        Run in the foreground with output streamed live; exit with the command's code
        (124 on timeout, 128+N on signal N, 130 after Ctrl-C).
  agent-shell start [--name N [--restart]] [--ready-port P|--ready-pattern RE|--ready-url URL]
                    [--restart-on failure|always] [--tty] -- CMD...
        Start a background task in the per-user daemon; print its id.
  agent-shell ps [--all] [--json]            list background tasks
  agent-shell logs NAME|ID [--follow] [--tail N] [--stderr]
  agent-shell wait NAME|ID... [--timeout S]       exit with the tasks' exit code (124 on timeout)
  agent-shell kill NAME|ID... | --all
  agent-shell restart NAME|ID...            restart in place (same id, command, env, readiness)
  agent-shell up [NAME...] [-f FILE]        start agent-shell.toml's services in dependency order
  agent-shell down [NAME...] [-f FILE]      stop them, dependants first
  agent-shell daemon start|stop|status
  agent-shell config show [--config FILE] [--json]   every setting, its value and its source
  agent-shell hosts check [NAME...] [--json]
        Each configured host: how it is reached, the far side's agent-shell version,
        sandbox level and round-trip time, or what is wrong (exit 1).
  agent-shell sandbox check [--json]
        What this kernel can contain, and what each sandbox mode enforces here.
        Sandbox modes (--sandbox, AGENT_SHELL_SANDBOX, config sandbox):
        workspace-write (default), read-only, off.
  agent-shell shell check [--json]
        What local commands start from: your login shell's variables (names only),
        aliases, functions and options, and how long it took (shell_snapshot).
  agent-shell rules check [--json] -- CMD...   the decision for a command line, per simple command
  agent-shell rules test [FILE]               run the [[rules.examples]] (exit 1 if one fails)
  agent-shell rules trust [DIR]               read DIR/.agent-shell.toml's rules, as it is now
  agent-shell audit [--since 1h] [--tool NAME] [--decision D] [--json] [--follow]
        The record of every call (<state>/audit.jsonl), one line a call.
  agent-shell VERB --help                    options and examples of each command
  agent-shell --version | --help

Tools: bash, task, task_output, kill_shell, task_list, write_stdin.

Examples:
  agent-shell call bash '{"command": "echo hello"}'
  echo '{"command": "ls -la"}' | agent-shell call bash -
  agent-shell run --timeout 600 -- npm test
  agent-shell up && npm test; agent-shell down       # services from ./agent-shell.toml
`;
