import type { ClientChannel } from "ssh2";

/**
 * One long-lived remote `sh` per connection for small control scripts (kill a group,
 * check liveness, launch and reap background tasks). It saves a channel open and the
 * remote user's rc files on every call, and holds the slot reserved for control work, so
 * kills still get through when every other session slot is busy. Scripts run one at a
 * time, each in a subshell with stdin from /dev/null (it must not eat the next script).
 */
export class ControlShell {
  private queue: Promise<unknown> = Promise.resolve();
  private buffer = "";
  private pending: { resolve: (r: { code: number; out: string }) => void; reject: (e: Error) => void } | null = null;
  private closedError: Error | null = null;
  private readonly marker = `__agent_shell_${Math.random().toString(36).slice(2)}__`;

  constructor(private channel: ClientChannel) {
    channel.on("data", (d: Buffer) => this.onData(d.toString("utf8")));
    channel.stderr.on("data", () => {});
    channel.on("close", () => this.fail(new Error("the control channel closed")));
  }

  get closed(): boolean {
    return this.closedError !== null;
  }

  /** Runs `script` remotely; resolves with its exit code and merged output. */
  run(script: string, timeoutMs = 15_000): Promise<{ code: number; out: string }> {
    const next = this.queue.then(() => this.runNow(script, timeoutMs));
    this.queue = next.catch(() => {});
    return next;
  }

  /** Resolves when every script queued so far has finished. */
  idle(): Promise<void> {
    return this.queue.then(() => {});
  }

  private runNow(script: string, timeoutMs: number): Promise<{ code: number; out: string }> {
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
      this.channel.write(`(\n${script}\n) </dev/null 2>&1; printf '\\n%s %s\\n' ${this.marker} $?\n`);
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
