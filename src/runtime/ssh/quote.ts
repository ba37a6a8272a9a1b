import { invalidArgument } from "../../errors.ts";

/**
 * Quoting for the remote POSIX shell. Everything the caller gives (command, paths, env
 * values) reaches the remote shell inside single quotes, so quotes, `$`, backslashes and
 * newlines arrive byte-for-byte.
 */

/** `it's` → `'it'\''s'`: a single-quoted word the shell turns back into exactly `s`. */
export function shq(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `export A='x' B='y'` (or nothing); names that a shell cannot export are refused. */
export function exportEnv(env: Record<string, string>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (!ENV_NAME.test(k)) throw invalidArgument("bash", "env", `'${k}' is not a valid environment variable name`);
    parts.push(`${k}=${shq(v)}`);
  }
  return parts.length ? `export ${parts.join(" ")}` : ":";
}

/**
 * A remote directory as a shell word: `~` and `~/x` are the remote user's home (the
 * default working directory), anything else is taken literally.
 */
export function remoteDir(dir: string): string {
  if (dir === "" || dir === "~") return `"$HOME"`;
  if (dir.startsWith("~/")) return `"$HOME"/${shq(dir.slice(2))}`;
  return shq(dir);
}

/**
 * A printf format that prints exactly `text`'s UTF-8 bytes (NUL included), for data that
 * has to travel inside a script: everything but plain printable ASCII becomes `\ddd`.
 */
export function printfExact(text: string): string {
  let out = "";
  for (const b of Buffer.from(text, "utf8")) {
    const plain = b >= 0x20 && b < 0x7f && b !== 0x25 /* % */ && b !== 0x5c /* \ */ && b !== 0x27; /* ' */
    out += plain ? String.fromCharCode(b) : `\\${b.toString(8).padStart(3, "0")}`;
  }
  return `'${out}'`;
}
