/**
 * The contained floor: the bwrap command line agent-shell's default sandbox (workspace-write,
 * namespaces level) builds for a command, spawned by Bun directly. What a sandboxed call
 * cannot go below, as raw `bash -c` is the floor of an uncontained one.
 */
import { defaultStateDir } from "../src/background/state/index.ts";
import { ConfigSchema } from "../src/config/schema.ts";
import { childEnv } from "../src/runtime/env.ts";
import { sandboxFromConfig } from "../src/sandbox/setup.ts";

/** bwrap's argv and environment for `bash -c command` in `cwd`, as a server there with state in `stateRoot` would build them. */
export function sandboxedCommand(command: string, cwd: string, stateRoot: string): { argv: string[]; env: Record<string, string> } {
  const sandbox = sandboxFromConfig(ConfigSchema.parse({}), { allowedRoots: [cwd], stateRoot, defaultStateRoot: defaultStateDir() });
  const { level, run } = sandbox.forCall(sandbox.mode);
  if (level !== "namespaces" || !run) throw new Error(`the default sandbox here is not bwrap (level ${level ?? "none"}): no contained floor to measure`);
  // The floor runs the command itself where agent-shell runs a launcher (the seccomp filter is left out: it needs an fd).
  const argv = run.wrap(["bash", "-c", command], { cwd, info: false });
  const at = argv.indexOf("--seccomp");
  argv.splice(at, 2, "--chdir", cwd);
  return { argv, env: childEnv() };
}
