import type { HostConfig } from "../../config/schema.ts";
import type { SshTarget } from "../ssh/connection/connection.ts";

/** How a far-side host is reached: a container of an engine, any pipe command, or an SSH connection. */
export type WayIn =
  | { kind: "container"; engine: "podman" | "docker"; container: string }
  | { kind: "exec"; argv: string[] }
  | { kind: "ssh"; target: SshTarget };

/** Whether a configured host runs agent-shell on the far side (containers and exec always; SSH with agent = true). */
export function usesFarAgent(cfg: HostConfig): boolean {
  return cfg.container !== undefined || cfg.exec !== undefined || cfg.agent === true;
}

export function wayIn(cfg: HostConfig): WayIn {
  if (cfg.container !== undefined) return { kind: "container", engine: cfg.engine ?? defaultEngine(), container: cfg.container };
  if (cfg.exec !== undefined) return { kind: "exec", argv: cfg.exec };
  return { kind: "ssh", target: cfg as SshTarget };
}

/** The engine a container host uses when none is configured: whichever is installed, podman first. */
export function defaultEngine(): "podman" | "docker" {
  if (Bun.which("podman")) return "podman";
  if (Bun.which("docker")) return "docker";
  return "podman";
}

/** One line for people: `podman container 'box'`, `exec: kubectl exec -i pod --`, `ssh root@h:22`. */
export function describeWayIn(way: WayIn): string {
  switch (way.kind) {
    case "container":
      return `${way.engine} container '${way.container}'`;
    case "exec":
      return `exec: ${way.argv.join(" ")}`;
    case "ssh":
      return `ssh ${way.target.user ?? process.env.USER ?? "root"}@${way.target.host}:${way.target.port}`;
  }
}

/** argv that runs `sh -c script` on the far side with stdin and stdout as a pipe (not for SSH). */
export function pipeArgv(way: Exclude<WayIn, { kind: "ssh" }>, script: string): string[] {
  const prefix = way.kind === "container" ? [way.engine, "exec", "-i", way.container] : way.argv;
  return [...prefix, "sh", "-c", script];
}
