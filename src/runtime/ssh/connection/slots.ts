/**
 * Session slots of one SSH connection. sshd limits the channels open at once
 * (`MaxSessions`, default 10) and refuses the next one; a channel keeps its slot until its
 * remote process ends. Channels therefore wait here for a slot instead of failing.
 * The last slot is kept for control work (kill, liveness, launch), so a connection full
 * of long-running commands can still kill them. If the server refuses a channel while we
 * hold fewer than `limit`, its limit is lower than assumed: `shrink()` lowers it.
 */
export type SlotPriority = "normal" | "control";

interface Waiter {
  priority: SlotPriority;
  resolve: () => void;
}

export class SessionSlots {
  private inUse = 0;
  private waiters: Waiter[] = [];

  /** Called when a channel has to wait for a slot (the pool then gives back an idle one). */
  onWait: (() => void) | null = null;

  constructor(private limit: number) {}

  get used(): number {
    return this.inUse;
  }

  /** Resolves when a slot is held; call the returned function exactly once to give it back. */
  async acquire(priority: SlotPriority): Promise<() => void> {
    if (!this.canTake(priority)) {
      const waited = new Promise<void>((resolve) => this.waiters.push({ priority, resolve }));
      this.onWait?.();
      await waited;
    } else {
      this.inUse++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      this.wake();
    };
  }

  /** The server refused a channel while `inUse` (this one included) were held. */
  shrink(): void {
    this.limit = Math.max(1, this.inUse - 1);
  }

  private canTake(priority: SlotPriority): boolean {
    const cap = priority === "control" ? this.limit : Math.max(1, this.limit - 1);
    return this.inUse < cap;
  }

  private wake(): void {
    // Control work first, then first come first served.
    for (const priority of ["control", "normal"] as const) {
      for (let i = 0; i < this.waiters.length; ) {
        const w = this.waiters[i]!;
        if (w.priority === priority && this.canTake(priority)) {
          this.waiters.splice(i, 1);
          this.inUse++;
          w.resolve();
        } else i++;
      }
    }
  }
}
