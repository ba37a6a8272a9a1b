/** Reading a shaped result (SPEC §15): its marker lines, what it shows besides them, and the raw output it stands for. */

/** A marker line: `[… … truncated (bytes A-B of T total) …]`. */
export const MARKER = /^\[… .* truncated \(bytes (\d+)-(\d+) of (\d+) total\) …\]$/;

export interface Marker {
  line: string;
  start: number;
  end: number;
  total: number;
}

export function markersOf(text: string): Marker[] {
  return text.split("\n").flatMap((line) => {
    const m = MARKER.exec(line);
    return m ? [{ line, start: Number(m[1]), end: Number(m[2]), total: Number(m[3]) }] : [];
  });
}

/** Bytes shown besides marker lines (and the line breaks that end them). */
export function shownBytes(text: string): number {
  return Buffer.byteLength(
    text
      .split("\n")
      .filter((l) => !MARKER.test(l))
      .join("\n"),
  );
}

/**
 * The raw output a shaped text stands for: its kept lines, and for each marker the bytes
 * `read(A, B)` returns. A marker inside a line (a long line's middle) follows a line
 * break that is not in the output; the line break ending a marker line never is.
 */
export async function reconstruct(text: string, read: (start: number, end: number) => Promise<string> | string): Promise<string> {
  const lines = text.split("\n");
  let out = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = MARKER.exec(line);
    if (m) {
      out += await read(Number(m[1]), Number(m[2]));
      continue;
    }
    if (i === lines.length - 1) {
      out += line; // after the last line break: a final line without one, or ""
      continue;
    }
    const next = MARKER.exec(lines[i + 1] ?? "");
    // A marker starting right after this text (no line break between) continues the same line.
    out += next && Number(next[1]) === Buffer.byteLength(out + line) ? line : line + "\n";
  }
  return out;
}
