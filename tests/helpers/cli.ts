import { BINARY } from "./mcp.ts";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the compiled binary as a command line, with no stdin. */
export async function runCli(args: string[], opts: { env?: Record<string, string>; cwd?: string; stdin?: string } = {}): Promise<CliResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AGENT_SHELL_") ) env[k] = v;
  Object.assign(env, opts.env);
  const proc = Bun.spawn([BINARY, ...args], {
    env,
    cwd: opts.cwd,
    stdin: opts.stdin !== undefined ? new Blob([opts.stdin]) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}
