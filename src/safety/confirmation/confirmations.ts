
/** How long an unanswered confirmation stays valid (SPEC §14). */
export const CONFIRMATION_TTL_MS = 10 * 60 * 1000;
/** At most this many wait per connection; the oldest goes first. */
export const MAX_PENDING = 100;

/**
 * Requests flagged for confirmation and not yet confirmed, for one connection (an MCP
 * session; the daemon keeps one per client). A record binds the whole request — command,
 * working directory, env, stdin, tty, host, sandbox — through `requestBinding`, so a
 * confirmed call that differs in anything is refused. Used once; expires; capped. Only a
 * digest is kept, so 10,000 unconfirmed 100 KB commands cost no memory to speak of.
 */
export class PendingConfirmations {
  private pending = new Map<string, number>(); // digest → expiry (ms since epoch)

  constructor(private readonly now: () => number = Date.now) {}

  request(binding: string): void {
    this.prune();
    const key = digest(binding);
    this.pending.delete(key); // re-asking moves it to the newest end
    this.pending.set(key, this.now() + CONFIRMATION_TTL_MS);
    while (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
  }

  /** True if exactly this request was flagged and has not expired; the record is consumed. */
  consume(binding: string): boolean {
    this.prune();
    return this.pending.delete(digest(binding));
  }

  get size(): number {
    this.prune();
    return this.pending.size;
  }

  private prune(): void {
    const now = this.now();
    for (const [key, expires] of this.pending) if (expires <= now) this.pending.delete(key);
  }
}

/**
 * What a confirmation is bound to: every argument of the call except `confirmed` and
 * `description`, in a canonical order (key order in the caller's JSON does not matter).
 */
export function requestBinding(tool: string, args: Record<string, unknown>): string {
  const { confirmed: _c, description: _d, ...rest } = args;
  return `${tool}\0${canonical(rest)}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

const digest = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
