/**
 * Human output for the terminal: colour only on a TTY and never with NO_COLOR
 * (https://no-color.org), aligned tables, short durations, and a spinner that never
 * writes an escape sequence (carriage return + padding only).
 */
export function colourEnabled(stream: { isTTY?: boolean } = process.stdout): boolean {
  const noColor = process.env.NO_COLOR;
  return stream.isTTY === true && (noColor === undefined || noColor === "") && process.env.TERM !== "dumb";
}

export type Colour = "red" | "green" | "yellow" | "dim" | "bold";
const CODES: Record<Colour, [number, number]> = { red: [31, 39], green: [32, 39], yellow: [33, 39], dim: [2, 22], bold: [1, 22] };

export function paint(text: string, colour: Colour | undefined, enabled: boolean): string {
  if (!enabled || !colour || text === "") return text;
  const [on, off] = CODES[colour];
  return `\x1b[${on}m${text}\x1b[${off}m`;
}

export interface Cell {
  text: string;
  colour?: Colour;
}

/** Columns padded to their widest cell; the last column is cut to the terminal width on a TTY. */
export function table(header: string[], rows: Cell[][], opts: { colour: boolean; width?: number }): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.text.length)));
  const line = (cells: Cell[]) => {
    let out = "";
    cells.forEach((c, i) => {
      const last = i === cells.length - 1;
      let text = c.text;
      if (last && opts.width) {
        const room = Math.max(10, opts.width - out.length);
        if (text.length > room) text = text.slice(0, room - 1) + "…";
      }
      out += paint(text, c.colour, opts.colour) + (last ? "" : " ".repeat(widths[i]! - text.length + 2));
    });
    return out.trimEnd() + "\n";
  };
  return line(header.map((h) => ({ text: h, colour: "bold" }))) + rows.map(line).join("");
}

/** 850ms, 12s, 3m04s, 2h05m, 3d04h. */
export function shortDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, "0")}h`;
}

const FRAMES = ["|", "/", "-", "\\"];

/** A one-line spinner with elapsed time on stderr; a no-op unless stderr is a terminal. */
export class Spinner {
  private timer: ReturnType<typeof setInterval> | null = null;
  private width = 0;
  private frame = 0;
  private readonly started = performance.now();

  constructor(
    private label: string,
    private readonly enabled = process.stderr.isTTY === true,
  ) {}

  start(delayMs = 0): this {
    if (!this.enabled) return this;
    const begin = () => {
      this.render();
      this.timer = setInterval(() => this.render(), 100);
    };
    if (delayMs > 0) this.timer = setTimeout(begin, delayMs) as unknown as ReturnType<typeof setInterval>;
    else begin();
    return this;
  }

  setLabel(label: string): void {
    this.label = label;
  }

  private render(): void {
    const elapsed = ((performance.now() - this.started) / 1000).toFixed(1);
    const text = `${FRAMES[this.frame++ % FRAMES.length]} ${this.label} (${elapsed}s)`;
    process.stderr.write(`\r${text}${" ".repeat(Math.max(0, this.width - text.length))}`);
    this.width = text.length;
  }

  /** Removes the spinner line. */
  stop(): void {
    if (this.timer) {
      clearInterval(this.timer);
      clearTimeout(this.timer as unknown as ReturnType<typeof setTimeout>);
    }
    this.timer = null;
    if (this.width > 0) process.stderr.write(`\r${" ".repeat(this.width)}\r`);
    this.width = 0;
  }
}
