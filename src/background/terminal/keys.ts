/**
 * Named keys for write_stdin, so a model need not know escape sequences. Arrow keys follow
 * the terminal's cursor-key mode (full-screen programs switch to "application" mode).
 */
const KEYS: Record<string, string> = {
  enter: "\r",
  tab: "\t",
  esc: "\x1b",
  escape: "\x1b",
  space: " ",
  backspace: "\x7f",
  delete: "\x1b[3~",
  home: "\x1b[H",
  end: "\x1b[F",
  pageup: "\x1b[5~",
  pagedown: "\x1b[6~",
  up: "\x1b[A",
  down: "\x1b[B",
  right: "\x1b[C",
  left: "\x1b[D",
};

const ARROWS = new Set(["up", "down", "right", "left"]);

/** The named keys above plus `ctrl-a` … `ctrl-z`, for messages. */
export const KNOWN_KEYS_HELP = `${Object.keys(KEYS).join(", ")}, ctrl-a … ctrl-z`;

/**
 * The bytes a key sends. On a pipe (no terminal to translate it) Enter is a newline.
 * Returns null for an unknown name.
 */
export function keyBytes(name: string, mode: { tty: boolean; applicationCursor: boolean }): string | null {
  const key = name.toLowerCase();
  const ctrl = /^ctrl-([a-z])$/.exec(key);
  if (ctrl) return String.fromCharCode(ctrl[1]!.charCodeAt(0) - 96);
  if (key === "enter" && !mode.tty) return "\n";
  const seq = KEYS[key];
  if (seq === undefined) return null;
  return ARROWS.has(key) && mode.applicationCursor ? `\x1bO${seq.slice(2)}` : seq;
}
