/**
 * Every simple command a line would run, shells within it included: the text a shell is
 * given to run — `bash -c '…'`, `sh -c`, `eval` of literal words, a here-document or
 * here-string fed to a shell — is read as a line of its own, to any depth up to MAX_DEPTH.
 * A shell given text that is only known when it runs (`eval "$x"`, `bash -c "$(curl …)"`,
 * `curl … | sh`) is reported unknown: what it runs cannot be decided beforehand (SPEC §22).
 */
import { type ParsedLine, parseBash, type SimpleCommand } from "./bash-parser.ts";
import { commandViews, said } from "./command-word.ts";

const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox"]);
const MAX_DEPTH = 8;

export function readLine(line: string, depth = 0): ParsedLine {
  const parsed = parseBash(line);
  const nested: ParsedLine[] = [];
  for (const command of parsed.commands) {
    const text = shellText(command);
    if (text === undefined) continue;
    if (text === null || depth >= MAX_DEPTH) {
      parsed.unknown.push({ text: command.text, why: depth >= MAX_DEPTH ? `shells nested more than ${MAX_DEPTH} deep` : "it runs text that is only known when it runs" });
    } else nested.push(readLine(text, depth + 1));
  }
  for (const inner of nested) {
    parsed.commands.push(...inner.commands);
    parsed.redirects.push(...inner.redirects);
    parsed.unknown.push(...inner.unknown);
    parsed.forkBomb ??= inner.forkBomb;
  }
  return parsed;
}

/**
 * The text a command hands to a shell to run: a string, null when only known at run time,
 * undefined when the command runs no shell text (a script file, or not a shell at all).
 */
function shellText(command: SimpleCommand): string | null | undefined {
  const { views } = commandViews(command.words);
  const last = views[views.length - 1];
  if (!last) return undefined;
  if (last.word === "eval") {
    if (last.args.length === 0) return undefined;
    return last.args.some((a) => a.value === null) ? null : last.args.map(said).join(" ");
  }
  if ((last.word === "source" || last.word === ".") && last.args[0]?.value === null) return null;
  if (!SHELLS.has(last.word)) return undefined;
  const args = last.word === "busybox" ? last.args.slice(1) : last.args;
  if (last.word === "busybox" && !SHELLS.has(said(last.args[0] ?? { text: "", value: "" }))) return undefined;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const v = said(w);
    // The first operand is a script file: what it runs is the file's, as with any program.
    if (v === "--") return i + 1 < args.length ? undefined : stdinText(command);
    if (!v.startsWith("-") && !v.startsWith("+")) return undefined;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(v)) {
      const script = args[i + 1];
      if (!script) return undefined;
      return script.value;
    }
    if (v === "-o" || v === "+o" || v === "-O" || v === "+O" || v === "--rcfile" || v === "--init-file") i++;
  }
  return stdinText(command);
}

/** A shell reading its commands from standard input: the literal here-document, else unknown when fed. */
function stdinText(command: SimpleCommand): string | null | undefined {
  if (command.input !== null) return command.input;
  return command.pipedInput ? null : undefined;
}
