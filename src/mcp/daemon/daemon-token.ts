import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defaultStateDir } from "../../background/state/state-dir.ts";
import { makePrivateDir, writePrivateFile } from "../../background/state/private-files.ts";

/**
 * A secret the daemon asks of every connection before it speaks MCP. The socket is 0600,
 * but a sandboxed command runs as the same user. Its token lives in the user's default
 * state dir, whatever the daemon's own state dir (another `--state-dir`, a folder under
 * /tmp): every sandbox hides that folder, so no sandboxed command can read any daemon's
 * token (SPEC §20); the seccomp filter keeps it off the socket besides.
 */
export function tokenPath(socketPath: string): string {
  const id = new Bun.CryptoHasher("sha256").update(resolve(socketPath)).digest("hex").slice(0, 32);
  return join(defaultStateDir(), "daemon-tokens", `${id}.token`);
}

export function issueDaemonToken(socketPath: string): string {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex");
  const path = tokenPath(socketPath);
  makePrivateDir(join(path, ".."));
  writePrivateFile(path, token);
  return token;
}

/** The running daemon's token, or "" when it cannot be read (the daemon will then refuse us). */
export function readDaemonToken(socketPath: string): string {
  try {
    return readFileSync(tokenPath(socketPath), "utf8").trim();
  } catch {
    return "";
  }
}
