/**
 * The containment floor: what the kernel and the spawn helper cost for one command, with no
 * tool, registry or MCP around it — `bash -c COMMAND` started the way agent-shell's runtime
 * starts it when no helper waits ahead (src/runtime/local-process.ts spawnChild: a task
 * cgroup, a process limit, the kept sandbox's namespaces or none, the restrictions, the
 * monitor), its pipes read and its exit awaited. The raw floor is the same without any of it.
 */
import { closeSync } from "node:fs";
import { defaultStateDir } from "../src/background/state/index.ts";
import { ConfigSchema } from "../src/config/schema.ts";
import { childEnv } from "../src/runtime/env.ts";
import { closeKeptSandboxes } from "../src/runtime/kept-sandbox.ts";
import { releaseContainment, spawnChild } from "../src/runtime/local-process.ts";
import { createPipe } from "../src/runtime/pipes.ts";
import { configureHelper } from "../src/runtime/spawn-helper/helper-binary.ts";
import { sandboxFromConfig } from "../src/sandbox/setup.ts";
import { drain } from "./lib.ts";

/** A function that runs `bash -c command` once through the helper, sandboxed (the default policy in `cwd`) or not. */
export function helperFloor(command: string, cwd: string, stateRoot: string, sandboxed: boolean): () => Promise<void> {
  configureHelper(stateRoot);
  const sandbox = sandboxFromConfig(ConfigSchema.parse({}), { allowedRoots: [cwd], stateRoot, defaultStateRoot: defaultStateDir() });
  const run = sandboxed ? sandbox.forCall(sandbox.mode).run : undefined;
  if (sandboxed && run?.level !== "namespaces") throw new Error("the default sandbox here is not the namespaces level: no floor to measure");
  const env = childEnv();
  return async () => {
    const [outR, outW] = createPipe();
    const [errR, errW] = createPipe();
    const { proc, containment } = await spawnChild({ command, cwd, env, stdin: null, sandbox: run }, { stdin: "ignore", stdout: outW, stderr: errW });
    closeSync(outW);
    closeSync(errW);
    await Promise.all([drain(Bun.file(outR).stream()), drain(Bun.file(errR).stream()), proc.exited]);
    closeSync(outR);
    closeSync(errR);
    releaseContainment(containment);
  };
}

/** Ends the kept sandboxes the floors built in this process (else they outlive the benchmark). */
export function closeHelperFloors(): void {
  closeKeptSandboxes({ kill: true });
}
