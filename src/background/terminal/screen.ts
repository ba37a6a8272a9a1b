import type { IBuffer, IMarker, Terminal as XTerm } from "@xterm/headless";
import type { OutputStream } from "../output/stream.ts";
import { TerminalText } from "./text.ts";

/**
 * Renders a tty task's raw output the way a terminal would (@xterm/headless): escape
 * sequences interpreted, carriage-return overwrites and cursor movement applied.
 *
 * Lines that scroll off the top of the screen can no longer change: they are committed,
 * as plain text, to the task's stdout stream (bounded memory + spool, like any stream).
 * The rows still on screen stay live until the task ends, when they are committed too.
 * `text` reads both together; `screen()` is what the terminal shows now.
 *
 * Rendering is synchronous, inside the data path: while the emulator is busy nobody reads
 * the PTY, so a child that writes faster than the emulator renders is slowed down instead
 * of piling output up in memory.
 */

/**
 * Rows kept above the screen. Committed rows are not needed any more, but the emulator only
 * drops rows when its scrollback is full, so this bounds its memory (1000 rows: ~105 MB peak
 * server RSS for 50 MB of output, against ~140 MB with 5000).
 */
const SCROLLBACK = 1000;
/**
 * Input is rendered in pieces this small; before a piece could push uncommitted rows out
 * of the scrollback (a row needs at least one byte), they are committed. Committing in
 * batches rather than per piece roughly doubles throughput.
 */
const PIECE = 500;

type XTermModule = typeof import("@xterm/headless");
let xtermModule: Promise<XTermModule> | null = null;

/** Loaded on first use: the emulator is large and most runs never need it. */
async function loadTerminal(): Promise<XTermModule["Terminal"]> {
  xtermModule ??= import("@xterm/headless");
  const mod = (await xtermModule) as XTermModule & { default?: XTermModule };
  return mod.Terminal ?? mod.default!.Terminal;
}

const encoder = new TextEncoder();

export class TerminalScreen {
  /** The readable text: committed lines + live rows, with a read cursor. */
  readonly text: TerminalText;
  /** Bumped on every change of the rendered state (for caches). */
  version = 0;
  private term: XTerm | null;
  private writeSync: (data: Uint8Array) => void;
  /** Marks the first row of the normal buffer not yet committed; follows scrollback trims. */
  private marker: IMarker | null = null;
  private finalScreen = "";
  private finalCursorLine = "";
  private replyListeners: Array<(reply: string) => void> = [];

  private constructor(
    Terminal: XTermModule["Terminal"],
    cols: number,
    rows: number,
    private readonly committed: OutputStream,
  ) {
    this.term = new Terminal({ cols, rows, scrollback: SCROLLBACK, allowProposedApi: true, logLevel: "off" });
    // The public write() is asynchronous and unbounded (it queues). The core's synchronous
    // write renders before returning, which is what gives the data path back-pressure.
    const core = (this.term as unknown as { _core: { writeSync(d: Uint8Array): void } })._core;
    this.writeSync = (d) => core.writeSync(d);
    // Answers to terminal queries (cursor position, device attributes) go back to the child.
    this.term.onData((reply) => {
      for (const l of this.replyListeners) l(reply);
    });
    this.text = new TerminalText(committed, this);
  }

  static async create(cols: number, rows: number, committed: OutputStream): Promise<TerminalScreen> {
    return new TerminalScreen(await loadTerminal(), cols, rows, committed);
  }

  get ended(): boolean {
    return this.term === null;
  }

  /** Whether arrow keys must be sent in "application" form (full-screen programs ask for it). */
  get applicationCursorKeys(): boolean {
    return this.term?.modes.applicationCursorKeysMode ?? false;
  }

  /** Called with the terminal's answers to queries the child sent (to write back to it). */
  onReply(listener: (reply: string) => void): void {
    this.replyListeners.push(listener);
  }

  /** Renders raw output from the PTY. */
  feed(bytes: Uint8Array): void {
    if (!this.term) return;
    const buf = this.term.buffer.normal;
    for (let at = 0; at < bytes.byteLength; at += PIECE) {
      if (buf.baseY - this.committedRow() > SCROLLBACK - PIECE) this.harvest();
      this.writeSync(bytes.subarray(at, at + PIECE));
    }
    this.harvest();
    this.version++;
  }

  resize(cols: number, rows: number): void {
    if (!this.term) return;
    this.term.resize(cols, rows);
    this.version++;
  }

  /** The visible screen: one line per row, trailing blank rows dropped. */
  screen(): string {
    if (!this.term) return this.finalScreen;
    const buf = this.term.buffer.active;
    const lines: string[] = [];
    for (let r = 0; r < this.term.rows; r++) lines.push(rowText(buf, buf.baseY + r, 0));
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines.join("\n");
  }

  /** The text of the row the cursor is on, up to the cursor (a prompt ends there). */
  cursorLine(): string {
    if (!this.term) return this.finalCursorLine;
    const buf = this.term.buffer.active;
    return rowText(buf, buf.baseY + buf.cursorY, buf.cursorX).trimEnd();
  }

  /** Text of the rows not yet committed (the live part of `text`). */
  liveText(): string {
    if (!this.term) return "";
    const buf = this.term.buffer.normal;
    const start = this.committedRow();
    const cursorRow = buf.baseY + buf.cursorY;
    let last = buf.length - 1;
    while (last > cursorRow && last >= start && rowText(buf, last, 0) === "") last--;
    let out = "";
    for (let r = start; r <= last; r++) {
      const continued = r < last && buf.getLine(r + 1)!.isWrapped;
      out += continued ? buf.getLine(r)!.translateToString(false) : rowText(buf, r, r === cursorRow ? buf.cursorX : 0);
      if (r < last && !continued) out += "\n";
    }
    return out;
  }

  /** The task ended: commit what is still on screen and free the emulator. */
  finish(): void {
    if (!this.term) return;
    this.harvest();
    const live = this.liveText();
    if (live) this.committed.append(encoder.encode(live));
    this.finalScreen = this.screen();
    this.finalCursorLine = this.cursorLine();
    this.marker?.dispose();
    this.term.dispose();
    this.term = null;
    this.version++;
  }

  /** Commits the complete logical lines that have scrolled off the screen. */
  private harvest(): void {
    const term = this.term!;
    // Only the normal buffer has scrollback; nothing scrolls into it while a full-screen
    // program has the alternate buffer.
    if (term.buffer.active.type !== "normal") return;
    const buf = term.buffer.normal;
    const start = this.committedRow();
    let end = buf.baseY;
    // Keep a line that wraps onto the screen whole: commit up to its first row.
    while (end > start && buf.getLine(end)?.isWrapped) end--;
    if (end <= start) return;
    let out = "";
    for (let r = start; r < end; r++) {
      const continued = buf.getLine(r + 1)!.isWrapped;
      out += continued ? buf.getLine(r)!.translateToString(false) : rowText(buf, r, 0);
      if (!continued) out += "\n";
    }
    this.committed.append(encoder.encode(out));
    this.marker?.dispose();
    this.marker = term.registerMarker(end - (buf.baseY + buf.cursorY)) ?? null;
  }

  private committedRow(): number {
    // A disposed marker was trimmed off the top: every row still held is uncommitted.
    if (!this.marker || this.marker.isDisposed) return 0;
    return this.marker.line;
  }
}

/**
 * A row's text without trailing blanks (written spaces included, as a terminal's copy
 * would), but kept up to `minCells` (the spaces a cursor sits after, as in a prompt).
 */
function rowText(buf: IBuffer, row: number, minCells: number): string {
  const line = buf.getLine(row);
  if (!line) return "";
  const trimmed = line.translateToString(true).replace(/ +$/, "");
  if (minCells <= 0 || trimmed.length >= minCells) return trimmed;
  return line.translateToString(false, 0, minCells);
}
