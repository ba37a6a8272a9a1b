import type { ClientChannel } from "ssh2";

/**
 * What the persistent spawners and remote process groups use of a host's connection.
 * connection.ts implements it; the narrow seam keeps them from importing the connection
 * (which owns the spawner pool).
 */
export interface HostLink {
  /** The configured host name (for messages). */
  readonly name: string;
  /** Increments on every new connection; a handle compares it to notice reconnections. */
  readonly generation: number;
  exec(command: string): Promise<OpenChannel>;
  run(script: string, timeoutMs?: number): Promise<{ code: number; out: string }>;
  track(pgid: number): Promise<void>;
  untrack(pgid: number): void;
}

export interface OpenChannel {
  channel: ClientChannel;
  /** Which connection (by generation) the channel belongs to. */
  generation: number;
  /**
   * The remote exit status (`signal` like "TERM"), or null if the channel closed without
   * one. Listened for from the moment the channel opens: ssh2 can deliver a fast command's
   * exit in the same burst as the open confirmation, before an awaiting caller resumes.
   */
  exit: Promise<{ code: number | null; signal: string | null } | null>;
}
