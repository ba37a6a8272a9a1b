import { readFileSync } from "node:fs";
import { writePrivateFile } from "../background/state/private-files.ts";

/**
 * A secret the daemon asks of every connection before it speaks MCP. The socket is 0600,
 * but a sandboxed command runs as the same user: Landlock (up to ABI 7) does not stop it
 * from connecting to a socket file. It cannot read the token, which lives in the state dir
 * the sandbox hides, so it cannot get work run outside its sandbox through the daemon.
 */
export function tokenPath(socketPath: string): string {
  return `${socketPath}.token`;
}

export function issueDaemonToken(socketPath: string): string {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex");
  writePrivateFile(tokenPath(socketPath), token);
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
