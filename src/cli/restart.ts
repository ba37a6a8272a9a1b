import { withDaemon } from "./daemon-client.ts";
import { printJson, printOut, reportError } from "./report.ts";
import { COMMON_OPTIONS, maybeHelp, parseVerbArgs } from "./verb-args.ts";

export const RESTART_HELP = `Usage: agent-shell restart NAME|ID...

Restart background tasks in place: each one's whole process group is terminated, then the
same command starts again with the same directory, environment, name and readiness check,
under the same id (its logs go on in the same files; 'ps' counts the restarts). Returns
once each is ready again. Exit 1 if one is unknown or fails to become ready.

Options:
  --json             print the results as JSON
  --state-dir DIR    the daemon's state dir

Examples:
  agent-shell restart web
  agent-shell restart bg-3 bg-4
`;

/** Readiness may take its own timeout (60 s by default): allow for it and a slow kill. */
const RESTART_TIMEOUT_MS = 30 * 60_000;

/** `agent-shell restart NAME|ID...`: one after another, in the order given. */
export async function restartCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("restart", argv, { ...COMMON_OPTIONS, json: { type: "boolean" } });
  if (maybeHelp(values, RESTART_HELP)) return 0;
  if (positionals.length === 0) return reportError("restart: give one or more task names or ids (see 'agent-shell restart --help')", 2);
  return withDaemon(values["state-dir"], async (client) => {
    const results = [];
    let code = 0;
    for (const ref of positionals) {
      const r = await client.restart(ref, RESTART_TIMEOUT_MS);
      results.push(r);
      if (r.error) {
        code = 1;
        if (!values.json) reportError(r);
        continue;
      }
      if (!values.json) printOut(`${r.task_id} restarted (pid ${r.pid}, restarts: ${r.restarts})\n`);
    }
    if (values.json) printJson({ results });
    return code;
  });
}
