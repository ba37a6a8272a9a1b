import { posix } from "node:path";
import { CodedError } from "../../errors.ts";
import type { Runtime } from "../../runtime/types.ts";
import type { ToolContext } from "../types.ts";

/**
 * The `host` parameter: which runtime runs the command and in which remote directory.
 * Local allowed paths do not apply on a remote host; a host may set its own
 * `allowed_paths` (remote paths, `~` = the remote home), checked lexically here.
 */
export function remoteTarget(
  ctx: ToolContext,
  host: string,
  workingDirectory: string | undefined,
  context: Record<string, unknown>,
): { runtime: Runtime; cwd: string } {
  const runtime = ctx.runtimeFor(host);
  const cwd = workingDirectory ?? "~";
  const allowed = ctx.config.hosts[host]?.allowed_paths;
  if (allowed && allowed.length > 0) {
    const path = homeRelative(cwd);
    if (!allowed.some((root) => inside(path, homeRelative(root)))) {
      throw new CodedError(
        "ACCESS_DENIED",
        `working_directory '${cwd}' is outside allowed paths of host '${host}' (${allowed.join(", ")})`,
        { ...context, host, working_directory: cwd },
      );
    }
  }
  return { runtime, cwd };
}

/** A remote path in `~/…` or absolute normal form (relative paths are relative to the home). */
function homeRelative(p: string): string {
  if (p.startsWith("/")) return posix.normalize(p);
  const rel = posix.normalize((p === "~" ? "" : p.startsWith("~/") ? p.slice(2) : p) || ".");
  if (rel === ".." || rel.startsWith("../")) return "\0above-home";
  return rel === "." ? "~" : `~/${rel.replace(/\/$/, "")}`;
}

function inside(path: string, root: string): boolean {
  const r = root.length > 1 && root.endsWith("/") ? root.slice(0, -1) : root;
  return path === r || path.startsWith(r === "/" ? "/" : r + "/");
}
