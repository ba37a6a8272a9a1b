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

Serve the tools (bash, task, task_output, kill_shell, task_list, write_stdin) over MCP
on stdio until stdin closes; every task it started is then terminated.

Options:
${SERVER_FLAGS}  --persist            a registry that survives restarts (tasks, logs, ids)
  --shared             be the per-user daemon on stdio: sessions (and one-process-per-call
                       clients) share one registry; --cwd/--allow apply to this connection only

Examples:
  agent-shell mcp --allow ../shared-lib
  agent-shell mcp --shared
  claude mcp add shell -- agent-shell mcp
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
