/**
 * Terminal control rendered the way a terminal would leave a line: escape sequences (CSI,
 * OSC, …) removed, a carriage return starts overwriting the line from its first column (so
 * a progress redraw keeps only its final state), a backspace moves back one column. Only
 * these count as terminal control: the CR of a CRLF line ending does not, and other
 * control bytes (NUL, BEL outside a sequence…) are data, passed on as they are.
 */

const ESC = 0x1b;

/** Whether these bytes hold terminal control: ESC, a backspace, or a CR not ending a CRLF. */
export function hasTerminalControl(bytes: Uint8Array): boolean {
  if (bytes.indexOf(ESC) !== -1 || bytes.indexOf(0x08) !== -1) return true;
  for (let i = bytes.indexOf(0x0d); i !== -1; i = bytes.indexOf(0x0d, i + 1)) if (bytes[i + 1] !== 0x0a) return true;
  return false;
}

/** Whether a decoded line (no newline) holds terminal control (same rule as hasTerminalControl). */
export function lineHasControl(line: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /[\x1b\x08]|\r(?!$)/.test(line);
}

/** The final visible state of one line (no newline in `line`). */
export function renderLine(line: string): string {
  if (!lineHasControl(line)) return line.endsWith("\r") ? line.slice(0, -1) : line;
  const cells: string[] = [];
  let col = 0;
  const put = (ch: string) => {
    cells[col++] = ch;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === ESC) {
      i = skipEscape(line, i, (final, params) => {
        // Erase in line: 0/none = cursor to end, 1 = start to cursor, 2 = whole line.
        if (final === "K") {
          const mode = params === "" ? 0 : Number(params);
          if (mode === 0) cells.length = col;
          else if (mode === 1) for (let k = 0; k <= col && k < cells.length; k++) cells[k] = " ";
          else cells.length = 0;
        } else if (final === "G") col = Math.max(0, (Number(params) || 1) - 1);
        else if (final === "C") col += Number(params) || 1;
        else if (final === "D") col = Math.max(0, col - (Number(params) || 1));
      });
      continue;
    }
    if (c === 0x0d) col = 0;
    else if (c === 0x08) col = Math.max(0, col - 1);
    else if (c === 0x07) continue; // a bell draws nothing
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < line.length) put(line[i]! + line[++i]!);
    else put(line[i]!);
  }
  let out = "";
  for (let k = 0; k < cells.length; k++) out += cells[k] ?? " ";
  return out.replace(/ +$/, "");
}

/**
 * Skips the escape sequence starting at `i` (the ESC); returns the index of its last
 * character. `onCsi` sees the final byte and parameters of a CSI sequence.
 */
function skipEscape(s: string, i: number, onCsi: (final: string, params: string) => void): number {
  const next = s[i + 1];
  if (next === "[") {
    let j = i + 2;
    while (j < s.length && /[0-?]/.test(s[j]!)) j++;
    const params = s.slice(i + 2, j);
    while (j < s.length && /[ -/]/.test(s[j]!)) j++;
    if (j < s.length) onCsi(s[j]!, params);
    return Math.min(j, s.length - 1);
  }
  if (next === "]" || next === "P" || next === "_" || next === "^" || next === "X") {
    // OSC / DCS / APC / PM / SOS: up to BEL or ESC \.
    for (let j = i + 2; j < s.length; j++) {
      if (s.charCodeAt(j) === 0x07) return j;
      if (s.charCodeAt(j) === ESC && s[j + 1] === "\\") return j + 1;
    }
    return s.length - 1;
  }
  if (next !== undefined && /[ -/]/.test(next)) return Math.min(i + 2, s.length - 1); // ESC ( B and friends
  return Math.min(i + 1, s.length - 1);
}
