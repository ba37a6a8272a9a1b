export const CALL_HELP = `Usage: agent-shell call TOOL [JSON|-] [options]

One tool call, exactly as an agent makes it over MCP; prints the result JSON on stdout.
Exit 0, 1 if the result is an error, 2 on usage errors. JSON '-' reads the arguments
from stdin. Foreground calls run in this process; background work (bash with
run_in_background, task with background) and task lookups (task_output, kill_shell,
task_list, write_stdin) go to the per-user daemon, so task ids work across invocations.

Options:
  --cwd DIR          working directory (default: the current directory)
  --allow DIR        also allow DIR as a working directory (repeatable)
  --timeout S        default foreground time limit
  --yes              run a command that needs confirmation without asking (no TTY)
  --config FILE      configuration file
  --state-dir DIR    state dir (and the daemon's)

Examples:
  agent-shell call bash '{"command": "echo hello"}'
  agent-shell call bash '{"command": "sleep 5; echo done", "run_in_background": true}'
  agent-shell call task_output '{"task_id": "bg-1", "wait": true}'
  echo '{"status": "running"}' | agent-shell call task_list -
`;
