import { decode } from "./decode.ts";

const MAX_PARTIAL = 64 * 1024;

/**
 * Turns a stream's chunks into lines for matchers (readiness, watches). The unfinished
 * last line is kept (bounded) and can be inspected, since a prompt or a "listening"
 * message may come without a newline.
 */
export class LineSplitter {
  private partial = "";

  /** Complete lines in this chunk (without newline characters). */
  push(chunk: Uint8Array): string[] {
    const text = this.partial + decode(chunk);
    const lines = text.split("\n");
    this.partial = lines.pop()!.slice(-MAX_PARTIAL);
    return lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  }

  /** The line being written, not yet ended by a newline. */
  get pending(): string {
    return this.partial;
  }

  /** The unfinished line, as a final line, once the stream has ended. */
  flush(): string[] {
    const rest = this.partial;
    this.partial = "";
    return rest === "" ? [] : [rest];
  }
}

/** Longest prefix of a line a caller's pattern is tested on: bounds the cost of any regex. */
export const MAX_MATCH_CHARS = 8192;

/** Tests a caller's pattern against a line (its first MAX_MATCH_CHARS characters). */
export function testLine(re: RegExp, line: string): boolean {
  re.lastIndex = 0;
  return re.test(line.length > MAX_MATCH_CHARS ? line.slice(0, MAX_MATCH_CHARS) : line);
}
