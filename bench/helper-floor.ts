/**
 * The containment floor: what the kernel and the kept spawner cost for one command, with no
 * tool, registry or MCP around it — `bash -c COMMAND` started the way agent-shell's runtime
 * starts a piped command (src/runtime/local/served-spawn.ts: a task cgroup, a process limit, the
 * spawner kept in the policy's sandbox or the unsandboxed one, a request with the command's
 * fds), its pipes read and its exit awaited. The raw floor is the same without any of it.
 */
import { closeSync } from "node:fs";
import { defaultStateDir } from "../src/background/state/index.ts";
import { ConfigSchema } from "../src/config/schema.ts";
import { childEnv } from "../src/runtime/env.ts";
import { closeKeptSandboxes } from "../src/runtime/containment/kept-sandbox.ts";
import { releaseContainment } from "../src/runtime/local/local-process.ts";
import { closeSpawners, spawnServed } from "../src/runtime/local/served-spawn.ts";
import { configureHelper } from "../src/runtime/spawn-helper/helper-binary.ts";
import { sandboxFromConfig } from "../src/sandbox/setup.ts";
import { drain } from "./lib.ts";

/** A function that runs `bash -c command` once through the kept spawner, sandboxed (the default policy in `cwd`) or not. */
export function helperFloor(command: string, cwd: string, stateRoot: string, sandboxed: boolean): () => Promise<void> {
  configureHelper(stateRoot);
  const sandbox = sandboxFromConfig(ConfigSchema.parse({}), { allowedRoots: [cwd], stateRoot, defaultStateRoot: defaultStateDir() });
  const run = sandboxed ? sandbox.forCall(sandbox.mode).run : undefined;
  if (sandboxed && run?.level !== "namespaces") throw new Error("the default sandbox here is not the namespaces level: no floor to measure");
  const env = childEnv();
  return async () => {
    const served = await spawnServed({ command, cwd, env, stdin: null, sandbox: run });
    if (!served) throw new Error("no spawner could start the command (no task cgroup here?)");
    const { started, stdout, stderr } = served;
    await Promise.all([drain(Bun.file(stdout).stream()), drain(Bun.file(stderr).stream()), started.proc.exited]);
    closeSync(stdout);
    closeSync(stderr);
    releaseContainment(started.containment);
  };
}

/** Ends the kept sandboxes and spawners the floors made in this process (else they outlive the benchmark). */
export function closeHelperFloors(): void {
  closeSpawners();
  closeKeptSandboxes({ kill: true });
}
