import type { HostLink } from "./host-link.ts";
import { aliveScript, signalScript } from "./scripts.ts";

/** Signals a remote process group (and its session) through the connection's control shell. */
export function signalRemoteGroup(conn: HostLink, pgid: number, signal: NodeJS.Signals): void {
  void conn.run(signalScript(pgid, signal)).catch(() => {});
}

/** Whether anything of a remote group is alive; an unreachable host counts as alive, so kills keep trying within their bounds. */
export async function remoteGroupAlive(conn: HostLink, pgid: number): Promise<boolean> {
  try {
    return (await conn.run(aliveScript(pgid))).code === 0;
  } catch {
    return true;
  }
}
