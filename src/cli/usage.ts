/** Usage errors exit with code 2 and a message on stderr. */
export class UsageError extends Error {}

export const HELP = `agent-shell — a safe, fast shell for coding agents

Usage:
  agent-shell mcp [--cwd DIR] [--allow DIR]... [--timeout S] [--config FILE] [--agent-command CMD]
        Serve the tools over MCP on stdio.
  agent-shell call TOOL [JSON|-] [--yes] [same flags as mcp]
        One tool call; prints the result JSON. Exit 0, 1 if the result is an error, 2 on usage errors.
  agent-shell --version | --help

Tools: bash, task_output, kill_shell, task_list.

Examples:
  agent-shell call bash '{"command": "echo hello"}'
  echo '{"command": "ls -la"}' | agent-shell call bash -
`;
