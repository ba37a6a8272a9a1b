import { withProxyEnv } from "../../sandbox/network/env.ts";
import { closeSync } from "node:fs";
import { launcherEnv, OWNER_MARKER, OWNER_TOKEN } from "../env.ts";
import { createPipe, pipeOf, writeAndClose } from "../kernel/pipes.ts";
import type { SpawnSpec } from "../types.ts";
import { helperExec } from "./helper-binary.ts";

/**
 * How the helper (agent-shell-helper.c) starts one command. Each field is one step of it, in
 * the order the helper takes them; absent steps are skipped (`--sandbox off` uses only the
 * process limit and the task cgroup).
 */
export interface HelperPlan {
  /** v1 pids `tasks` file of the task's process limit. */
  pids: string | null;
  /** v2 task cgroup the command is born in. */
  cgroup: string | null;
  /** Namespace fds of a kept sandbox, user namespace first. */
  namespaces: number[];
  /** A pid namespace (and /proc) of the command's own: where no task cgroup holds it. */
  ownPidNamespace: boolean;
  dropCapabilities: boolean;
  /** The Landlock ruleset (sandbox/landlock/ruleset.ts encodes it). */
  landlock: string | null;
  /** The seccomp BPF program. */
  seccomp: Uint8Array | null;
}

/** What a command is restricted by: the helper's plan without its containment (a kept spawner takes these once). */
export type Restrictions = Pick<HelperPlan, "namespaces" | "dropCapabilities" | "landlock" | "seccomp">;

/** Where the child's stdio goes: pipe fds, or a pseudo-terminal (Bun's `terminal` option). */
export interface StdioOptions {
  stdin?: number | "ignore";
  stdout?: number;
  stderr?: number;
  terminal?: object;
}

/**
 * Starts the helper for `plan`. It leads its own session (`detached`), runs with the launcher
 * environment in `/`, and waits for its request on the returned fd (sendRequest). Terminal
 * commands, and commands where no task cgroup can be made, start this way; the others through
 * a kept spawner (spawner.ts).
 */
export function startHelper(plan: HelperPlan, stdio: StdioOptions): { proc: Bun.Subprocess; request: number } {
  const helper = helperExec();
  const args = [helper.file, "start", "--request", "3"];
  const [requestR, requestW] = createPipe();
  const extra = [requestR];
  const opened: number[] = [];
  const pass = (flag: string, fd: number) => {
    args.push(flag, String(3 + extra.length));
    extra.push(fd);
  };
  try {
    if (plan.pids) args.push("--pids", plan.pids);
    if (plan.cgroup) args.push("--cgroup", plan.cgroup);
    for (const fd of plan.namespaces) pass("--ns", fd);
    if (plan.ownPidNamespace) args.push("--own-pid-ns");
    if (plan.dropCapabilities) args.push("--drop-caps");
    if (plan.landlock !== null) pass("--landlock", opened[opened.push(pipeOf(Buffer.from(plan.landlock))) - 1]!);
    if (plan.seccomp) pass("--seccomp", opened[opened.push(pipeOf(plan.seccomp)) - 1]!);
    const { stdin, stdout, stderr, ...rest } = stdio;
    const proc = Bun.spawn(args, {
      ...rest,
      argv0: helper.argv0,
      stdio: [stdin ?? (stdio.terminal ? null : "ignore"), stdout ?? null, stderr ?? null, ...extra],
      cwd: "/",
      env: helperEnv(),
      detached: true,
    } as never);
    return { proc, request: requestW };
  } catch (e) {
    closeSync(requestW);
    throw e;
  } finally {
    closeSync(requestR);
    for (const fd of opened) closeSync(fd);
  }
}

/** Tells a started helper its command: working directory, argv and environment. */
export function sendRequest(request: number, spec: SpawnSpec): void {
  writeAndClose(request, encodeRequest(spec));
}

/**
 * NUL-separated: the working directory, `null` when stdin is /dev/null (else `keep`: a pipe or the terminal), the
 * argv's length, the argv, then every `NAME=value`.
 */
export function encodeRequest(spec: SpawnSpec): string {
  const argv = spec.argv ?? ["bash", "-c", spec.command];
  // An allowlist sandbox's only way out is the proxy: the variables that make tools use it (SPEC §21).
  const env = Object.entries(spec.sandbox ? withProxyEnv(spec.env, spec.sandbox) : spec.env).map(([k, v]) => `${k}=${v}`);
  return [spec.cwd, spec.stdin === null && !spec.tty ? "null" : "keep", String(argv.length), ...argv, ...env].map((field) => `${field}\0`).join("");
}

/** The launcher environment, and this server's owner marker: a recovered registry knows its tasks' monitors by it (SPEC §14). */
export function helperEnv(): Record<string, string> {
  env ??= { ...launcherEnv(), [OWNER_MARKER]: OWNER_TOKEN };
  return env;
}
let env: Record<string, string> | null = null;
