import { decode } from "./decode.ts";
import type { ByteSource } from "./shape/items.ts";

/** How far back the last line is looked for: a prompt or a progress line is short. */
const TAIL_BYTES = 4096;

/** The last non-blank line of `text`, trailing whitespace and a carriage return removed. */
export function lastLine(text: string): string {
  const trimmed = text.replace(/\s+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("\n") + 1).replace(/\r$/, "");
}

/** The last non-blank line a stream holds (where a prompt or a progress message would be). */
export function lastLineOf(stream: ByteSource): string {
  const bytes = stream.read(Math.max(0, stream.total - TAIL_BYTES), stream.total);
  return bytes ? lastLine(decode(bytes)) : "";
}
