import type { ClientChannel } from "ssh2";

/** Tracked groups die with the control shell: end-of-file, a hangup or TERM all run the EXIT trap. */
function watchdogPreamble(graceSeconds: number): string {
  const grace = Math.max(0, Number(graceSeconds) || 0);
  return [
    "agent_fg=",
    `agent_reap() { [ -n "$agent_fg" ] || return 0; for g in $agent_fg; do kill -s TERM -- -$g 2>/dev/null; done; sleep ${grace}; for g in $agent_fg; do kill -s KILL -- -$g 2>/dev/null; done; }`,
    "trap agent_reap EXIT",
    "trap exit HUP TERM",
    "",
  ].join("\n");
}

/**
 * One long-lived remote `sh` per connection for small control scripts (kill a group,
 * check liveness, launch and reap background tasks). It saves a channel open and the
 * remote user's rc files on every call, and holds the slot reserved for control work, so
 * kills still get through when every other session slot is busy. Scripts run one at a
 * time, each in a subshell with stdin from /dev/null (it must not eat the next script).
 *
 * It is also the remote watchdog of the commands that stream on their channel (foreground,
 * tty): their groups are tracked in the shell, and when the connection goes away (a drop,
 * or agent-shell killed) the shell reads end-of-file and terminates them (TERM, the kill
 * grace, KILL).
 * A foreground command never outlives its call. Detached background tasks are not tracked:
 * they are meant to survive a drop.
 */
export class ControlShell {
  private queue: Promise<unknown> = Promise.resolve();
  private buffer = "";
  private pending: { resolve: (r: { code: number; out: string }) => void; reject: (e: Error) => void } | null = null;
  private closedError: Error | null = null;
  private readonly marker = `__agent_shell_${Math.random().toString(36).slice(2)}__`;

  private readonly decoder = new TextDecoder();

  constructor(
    private channel: ClientChannel,
    killGraceSeconds: number,
  ) {
    channel.on("data", (d: Buffer) => this.onData(this.decoder.decode(d, { stream: true })));
    channel.stderr.on("data", () => {});
    channel.on("close", () => this.fail(new Error("the control channel closed")));
    channel.write(watchdogPreamble(killGraceSeconds));
  }

  /** Terminate group `pgid` if the connection goes away before `untrack`. */
  track(pgid: number): Promise<unknown> {
    return this.run(`agent_fg="$agent_fg ${Math.trunc(pgid)}"`, undefined, true);
  }

  untrack(pgid: number): Promise<unknown> {
    const g = Math.trunc(pgid);
    return this.run(`n=; for g in $agent_fg; do [ "$g" = ${g} ] || n="$n $g"; done; agent_fg=$n`, undefined, true);
  }

  get closed(): boolean {
    return this.closedError !== null;
  }

  /**
   * Runs `script` remotely; resolves with its exit code and merged output. Scripts run in a
   * subshell, unless `inShell` (they then change the control shell's own variables).
   */
  run(script: string, timeoutMs = 15_000, inShell = false): Promise<{ code: number; out: string }> {
    const next = this.queue.then(() => this.runNow(script, timeoutMs, inShell));
    this.queue = next.catch(() => {});
    return next;
  }

  /** Resolves when every script queued so far has finished. */
  idle(): Promise<void> {
    return this.queue.then(() => {});
  }

  private runNow(script: string, timeoutMs: number, inShell: boolean): Promise<{ code: number; out: string }> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`control script timed out after ${timeoutMs} ms`));
        this.channel.close();
      }, timeoutMs);
      this.pending = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.buffer = "";
      const [open, close] = inShell ? ["{", "}"] : ["(", ")"];
      this.channel.write(`${open}\n${script}\n${close} </dev/null 2>&1; printf '\\n%s %s\\n' ${this.marker} $?\n`);
    });
  }

  private onData(text: string): void {
    this.buffer += text;
    const at = this.buffer.indexOf(`\n${this.marker} `);
    if (at < 0 || !this.pending) return;
    const end = this.buffer.indexOf("\n", at + 1);
    if (end < 0) return;
    const code = Number(this.buffer.slice(at + this.marker.length + 2, end));
    const out = this.buffer.slice(0, at);
    this.buffer = this.buffer.slice(end + 1);
    const p = this.pending;
    this.pending = null;
    p.resolve({ code, out });
  }

  private fail(e: Error): void {
    if (!this.closedError) this.closedError = e;
    const p = this.pending;
    this.pending = null;
    p?.reject(e);
  }

  close(): void {
    this.fail(new Error("the control channel was closed"));
    try {
      this.channel.end();
      this.channel.close();
    } catch {}
  }
}
