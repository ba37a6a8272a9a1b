/**
 * The bubblewrap-per-command floor: the sandbox agent-shell's default policy (workspace-write,
 * namespaces level) keeps, built by bwrap around each command and spawned by Bun directly —
 * what every peer that sandboxes pays per command; agent-shell keeps
 * one sandbox per policy (SPEC §18).
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
  // The kept sandbox's own command line, around the command itself: bwrap's init as pid 1, the
  // command as pid 2 in `cwd` (the seccomp filter is left out: it needs an fd).
  const argv = run.keptSandboxArgv(["bash", "-c", command], { cwd, infoFd: 3 });
  argv.splice(argv.indexOf("--as-pid-1"), 1);
  argv.splice(argv.indexOf("--info-fd"), 2);
  argv.splice(argv.indexOf("--chdir"), 2, "--chdir", cwd);
  return { argv, env: childEnv() };
}
