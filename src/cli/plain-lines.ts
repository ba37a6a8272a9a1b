/**
 * Turns a terminal program's raw bytes into plain lines as soon as each is complete, for
 * `run --tty` when our stdout is not a terminal: escape sequences are dropped and a line
 * redrawn with carriage returns (a progress bar) keeps only what was drawn last.
 */
export class PlainLines {
  private pending = "";
  private readonly decoder = new TextDecoder();

  /** The complete lines (each with "\n") this chunk finished. */
  push(chunk: Uint8Array): string {
    this.pending += this.decoder.decode(chunk, { stream: true });
    const nl = this.pending.lastIndexOf("\n");
    if (nl === -1) return "";
    const done = this.pending.slice(0, nl);
    this.pending = this.pending.slice(nl + 1);
    return done.split("\n").map(render).join("\n") + "\n";
  }

  /** What is left once the program ended (an unterminated last line). */
  flush(): string {
    const rest = render(this.pending + this.decoder.decode());
    this.pending = "";
    return rest ? rest + "\n" : "";
  }
}

// CSI (ESC [ … final), OSC (ESC ] … BEL or ST), and two-byte escapes.
const ESCAPES = /\x1b\[[0-?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g;

function render(line: string): string {
  const text = line.replace(ESCAPES, "").replace(/\r+$/, "");
  const cr = text.lastIndexOf("\r");
  return cr === -1 ? text : text.slice(cr + 1);
}
