import { statfsSync } from "node:fs";

/** The default cap: 10 GiB, or a tenth of the free space where the state dir is, whichever is smaller. */
const DEFAULT_CAP_BYTES = 10 * 1024 ** 3;

export function defaultMaxStateBytes(stateRoot: string): number {
  try {
    const fs = statfsSync(stateRoot);
    return Math.min(DEFAULT_CAP_BYTES, Math.floor((fs.bavail * fs.bsize) / 10));
  } catch {
    return DEFAULT_CAP_BYTES; // the state dir is made later: nothing measured to go by
  }
}

/**
 * The disk all of a registry's task logs may use together (config max_state_bytes, SPEC
 * §26): every spool asks it before writing. When the logs would go over, the oldest
 * finished tasks' logs go first (`makeRoom`); what is still missing is refused, and the
 * spool that asked stops spooling (its task keeps running) and says why.
 */
export class StateBudget {
  private used = 0;

  constructor(
    readonly maxBytes: number,
    private readonly makeRoom: (bytes: number) => void = () => {},
  ) {}

  /** How many of `bytes` may be written now (all, or what room is left after freeing some). */
  grant(bytes: number): number {
    if (this.used + bytes > this.maxBytes) this.makeRoom(this.used + bytes - this.maxBytes);
    const granted = Math.max(0, Math.min(bytes, this.maxBytes - this.used));
    this.used += granted;
    return granted;
  }

  /** Logs already on disk (recovered from an earlier registry): counted, whatever the cap. */
  add(bytes: number): void {
    this.used += bytes;
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}
