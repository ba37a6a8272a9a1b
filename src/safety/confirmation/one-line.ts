/**
 * Text shown on one line to a person (SPEC §19): newlines as `⏎`, runs of blanks collapsed,
 * control characters (and the invisible ones that reorder or break a line) shown escaped,
 * so nothing in a command can hide a part of it or redraw the terminal. Longer than `max`
 * characters, it is cut in the middle: the end of a command is where a harmful part hides.
 */
export function oneLine(text: string, max: number): string {
  const shown = text
    .replace(/[ \t]*\n[ \t]*/g, " ⏎ ")
    .replace(/[ \t]+/g, " ")
    .replace(/[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/gu, escaped)
    .trim();
  const chars = Array.from(shown); // never splits a character in two
  if (chars.length <= max) return shown;
  const keep = Math.max(max - 30, 2); // the marker takes at most 30
  const head = Math.ceil(keep / 2);
  return `${chars.slice(0, head).join("")} …${chars.length - keep} characters cut… ${chars.slice(chars.length - (keep - head)).join("")}`;
}

function escaped(c: string): string {
  if (c === "\r") return "\\r";
  const code = c.codePointAt(0)!;
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
}
