import type { OutputStream } from "../output/stream.ts";

const encoder = new TextEncoder();

/** The rows still live on a terminal's screen (the emulator provides them). */
export interface LiveRows {
  /** Bumped on every change of the rendered state. */
  readonly version: number;
  liveText(): string;
}
/** How far back a read cursor remembers its line, to notice that the line was redrawn. */
const CONTEXT_BYTES = 4096;

/**
 * The plain text of a tty task as results show it: the committed lines (a normal output
 * stream, spooled) followed by the rows still live on screen. It reads like a stream
 * (byte offsets, `total`, `read`), so views, filters and truncation work unchanged.
 *
 * The live rows can still change (a progress bar redrawing its line), so the read cursor
 * remembers the text of its line up to the cursor: if that line has been redrawn since,
 * the next read starts at the beginning of the line instead of in the middle of it.
 */
export class TerminalText {
  readonly name = "stdout" as const;
  private cachedVersion = -1;
  private live: Uint8Array = new Uint8Array(0);
  private readAt = 0;
  private lineStart = 0;
  private context: Uint8Array = new Uint8Array(0);

  constructor(
    private readonly committed: OutputStream,
    private readonly screen: LiveRows,
  ) {}

  private liveBytes(): Uint8Array {
    if (this.cachedVersion !== this.screen.version) {
      this.live = encoder.encode(this.screen.liveText());
      this.cachedVersion = this.screen.version;
    }
    return this.live;
  }

  get total(): number {
    return this.committed.total + this.liveBytes().byteLength;
  }

  read(start: number, end: number): Uint8Array | null {
    const split = this.committed.total;
    const live = this.liveBytes();
    end = Math.min(end, split + live.byteLength);
    start = Math.max(0, Math.min(start, end));
    if (end <= split) return this.committed.read(start, end);
    if (start >= split) return live.slice(start - split, end - split);
    const head = this.committed.read(start, split);
    if (!head) return null;
    const out = new Uint8Array(end - start);
    out.set(head);
    out.set(live.subarray(0, end - split), head.byteLength);
    return out;
  }

  get path(): string | undefined {
    return this.committed.path;
  }

  get spool() {
    return this.committed.spool;
  }

  /** Where output not yet returned starts (see the class comment about redrawn lines). */
  get cursor(): number {
    const total = this.total;
    if (this.readAt > total) return Math.min(this.lineStart, total);
    const now = this.read(this.lineStart, this.readAt);
    return now && equal(now, this.context) ? this.readAt : this.lineStart;
  }

  set cursor(at: number) {
    this.readAt = at;
    const from = Math.max(0, at - CONTEXT_BYTES);
    const before = this.read(from, at) ?? new Uint8Array(0);
    const nl = before.lastIndexOf(10);
    this.lineStart = nl === -1 ? at - before.byteLength : from + nl + 1;
    this.context = before.slice(nl + 1);
  }
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
