/** Help of the verbs that take the server flags (`mcp`, `config show`), each its own. */

const SERVER_FLAGS = `  --cwd DIR            the tools' working directory (default: the current directory)
  --allow DIR          another directory commands may run in (repeatable)
  --timeout S          foreground time limit in seconds (default: 120)
  --config FILE        the config file (default: $XDG_CONFIG_HOME/agent-shell/config.toml)
  --agent-command CMD  the subagent command template of the task tool
  --state-dir DIR      where task logs and state live
  --sandbox MODE       workspace-write (default), read-only or off
`;

export const MCP_HELP = `Usage: agent-shell mcp [options]
       agent-shell mcp --http [HOST:]PORT [--token-file FILE] [--allow-origin ORIGIN]... [options]

Serve the tools (bash, task, task_output, kill_shell, task_list, write_stdin) over MCP
on stdio until stdin closes; every task it started is then terminated. With --http, serve
the Streamable HTTP transport at http://HOST:PORT/mcp until SIGTERM/SIGINT instead.

Options:
${SERVER_FLAGS}  --persist            a registry that survives restarts (tasks, logs, ids)
  --shared             be the per-user daemon on stdio: sessions (and one-process-per-call
                       clients) share one registry; --cwd/--allow apply to this connection only
  --http [HOST:]PORT   Streamable HTTP on HOST (default 127.0.0.1; port 0 picks one); every
                       request needs 'Authorization: Bearer TOKEN'; sessions share the registry
  --token-file FILE    the token (first line); without it a random one is printed on stderr
  --allow-origin O     a browser origin allowed to call (repeatable); other Origins get 403
  --allow-host NAME    a name the server is reached by (repeatable; e.g. behind a proxy); a Host
                       header naming neither it nor the bound address gets 403
  --session-timeout S  close a session idle this long, ending its foreground work (default: 1800)

Examples:
  agent-shell mcp --allow ../shared-lib
  agent-shell mcp --shared
  claude mcp add shell -- agent-shell mcp
  agent-shell mcp --http 8080 --token-file ~/.config/agent-shell/token
`;

export const CONFIG_HELP = `Usage: agent-shell config show [options] [--json]

Print every setting with its value and where it came from (default, file, env or flag),
including the state dir actually used and the sandbox level this machine gives.

Options:
${SERVER_FLAGS}  --json               print {key: {value, source}} as JSON

Examples:
  agent-shell config show
  agent-shell config show --json | jq .state_dir
`;
