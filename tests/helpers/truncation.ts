/** The parts of a head + tail truncated text: `head`, the marker line, `tail`. */
export interface Truncated {
  head: string;
  marker: string;
  tail: string;
  /** Bytes shown besides the marker line and the line breaks around it. */
  shownBytes: number;
}

/** Splits text around its single `truncated` marker line; throws if there is not exactly one. */
export function splitTruncated(text: string): Truncated {
  const lines = text.split("\n");
  const idx = lines.map((l, i) => (l.includes("truncated") ? i : -1)).filter((i) => i >= 0);
  if (idx.length !== 1) throw new Error(`expected one marker line, found ${idx.length}`);
  const i = idx[0]!;
  const head = lines.slice(0, i).join("\n");
  const tail = lines.slice(i + 1).join("\n");
  const marker = lines[i]!;
  return { head, marker, tail, shownBytes: Buffer.byteLength(head) + Buffer.byteLength(tail) };
}
