import { basename } from "node:path";
import { CodedError } from "../../errors.ts";
import type { SshConnection } from "../ssh/connection/connection.ts";
import { installScript, STATUS_PREFIX } from "./agent-scripts.ts";
import { openPipe } from "./pipe.ts";
import type { WayIn } from "./way-in.ts";

let digest: Promise<string> | null = null;

/** SHA-256 of this very binary (read once per process). */
export function selfSha256(): Promise<string> {
  digest ??= (async () => {
    const hasher = new Bun.CryptoHasher("sha256");
    for await (const chunk of Bun.file(process.execPath).stream()) hasher.update(chunk);
    return hasher.digest("hex");
  })();
  return digest;
}

/** The compiled agent-shell binary running now; null under `bun src/main.ts` (nothing to copy). */
export function selfBinary(): string | null {
  return /^bun(\.exe)?$/.test(basename(process.execPath)) ? null : process.execPath;
}

/**
 * Copies this binary to the far side over a pipe of its own: streamed to a temporary
 * name there, checked against our SHA-256, renamed into place only if it matches.
 * Resolves with the installed path; an IO_ERROR says why a copy failed.
 */
export async function installAgent(host: string, way: WayIn, version: string, agentPath: string | undefined, ssh?: () => SshConnection): Promise<void> {
  const binary = selfBinary();
  if (!binary) {
    throw new CodedError("IO_ERROR", `Cannot copy agent-shell to host '${host}': this agent-shell runs from source (bun), not as the compiled binary; install agent-shell ${version} there or build dist/agent-shell`, { host });
  }
  const sha = await selfSha256();
  const pipe = await openPipe(way, installScript(version, agentPath, sha), { stdinFile: binary }, ssh);
  let out = "";
  pipe.onData((c) => (out += Buffer.from(c).toString("utf8")));
  const code = await pipe.closed;
  const status = out
    .split("\n")
    .filter((l) => l.startsWith(STATUS_PREFIX))
    .pop()
    ?.slice(STATUS_PREFIX.length);
  if (code === 0 && status?.startsWith("installed ")) return;
  const why = status?.startsWith("error ") ? status.slice(6) : `exit status ${code}${pipe.stderrTail() ? `: ${pipe.stderrTail()}` : ""}`;
  throw new CodedError("IO_ERROR", `Copying agent-shell ${version} to host '${host}' failed (nothing was installed): ${why}`, { host });
}
