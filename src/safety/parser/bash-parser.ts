/**
 * A command line read by a real bash parser (tree-sitter's bash grammar, as Codex does; SPEC
 * §22): what it yields is every simple command the line would run — inside `$(…)`,
 * backticks, subshells, pipelines, double-quoted text, here-documents — each with the words
 * it was written with, quotes removed where the word is literal. Quoted text is data. What
 * cannot be known before the line runs (a command word that is an expansion, a parse error)
 * is reported as unknown, never guessed. Shells run on literal text (`bash -c '…'`, `eval`)
 * are read in commands.ts, which knows the wrappers.
 *
 * The grammar is WebAssembly embedded in the binary; it is loaded once (parserReady), off the
 * first call's path when the server warms up (~100–200 ms); a parse is then synchronous.
 */
import { Language, type Node, Parser, type TreeCursor } from "web-tree-sitter";
import grammarFile from "tree-sitter-bash/tree-sitter-bash.wasm" with { type: "file" };
import runtimeFile from "web-tree-sitter/web-tree-sitter.wasm" with { type: "file" };

/** One word of a command: as written, and its value when no expansion decides it (null otherwise). */
export type Word = { text: string; value: string | null };

export type SimpleCommand = {
  /** The words after any `NAME=value` assignments; the first is the command word. */
  words: Word[];
  /** The command as written (for the person's question and `rules check`). */
  text: string;
  /** Literal text fed to its standard input by a here-document or here-string, if any. */
  input: string | null;
  /** Its standard input comes from a pipe or a file, not a terminal. */
  pipedInput: boolean;
};

export type Redirect = { text: string; target: Word };

export type ParsedLine = {
  commands: SimpleCommand[];
  /** Output redirections (`>`, `>>`, `&>`, `>|`) anywhere in the line. */
  redirects: Redirect[];
  /** Parts whose commands cannot be known before they run, each with why. */
  unknown: { text: string; why: string }[];
  /** A function that runs itself in a pipeline or in the background (the classic fork bomb). */
  forkBomb: string | null;
};

let parser: Parser | null = null;
let loading: Promise<void> | null = null;

/** Loads the grammar once; every caller awaits the same load. */
export function parserReady(): Promise<void> {
  loading ??= (async () => {
    await Parser.init({ wasmBinary: await Bun.file(runtimeFile).bytes() } as object);
    const language = await Language.load(await Bun.file(grammarFile).bytes());
    const p = new Parser();
    p.setLanguage(language);
    parser = p;
  })();
  return loading;
}

/**
 * A line of plain words only — no quote, expansion, operator, glob, comment or keyword —
 * is split at blanks exactly as bash would: such a line needs no grammar (`npm test`,
 * `ls -la src`), so a first simple command never waits for the grammar to load.
 */
const PLAIN = /^[ \t]*[A-Za-z0-9_./:,+@%=-]+(?:[ \t]+[A-Za-z0-9_./:,+@%=-]+)*[ \t]*$/;
const KEYWORDS = new Set(["if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done", "in", "function", "coproc", "time"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function plainWords(line: string): string[] | null {
  if (line.length > 4096 || !PLAIN.test(line)) return null;
  const words = line.trim().split(/[ \t]+/);
  let at = 0;
  while (at < words.length && ASSIGNMENT.test(words[at]!)) at++;
  return KEYWORDS.has(words[at] ?? "") ? null : words.slice(at);
}

export function isPlainLine(line: string): boolean {
  return plainWords(line) !== null;
}

/** Whether deciding about this line needs the grammar (parserReady) first. */
export function needsParser(line: string): boolean {
  return parser === null && !isPlainLine(line);
}

/** Parses one command line (parserReady must have resolved, unless needsParser says otherwise). */
export function parseBash(line: string): ParsedLine {
  const plain = plainWords(line);
  if (plain) {
    const commands = plain.length ? [{ words: plain.map((w) => ({ text: w, value: w })), text: line.trim(), input: null, pipedInput: false }] : [];
    return { commands, redirects: [], unknown: [], forkBomb: null };
  }
  if (!parser) throw new Error("the bash parser is not loaded yet (await parserReady())");
  // The grammar has no read-write redirection (`exec 3<>/dev/tcp/host/port`): it is read as a
  // write (`> `, the same length, so every offset holds), which judges its target as strictly.
  const tree = parser.parse(line.includes("<>") ? line.replace(/(\d*)<>/g, "$1> ") : line);
  const out: ParsedLine = { commands: [], redirects: [], unknown: [], forkBomb: null };
  if (!tree) {
    out.unknown.push({ text: line, why: "the line could not be parsed" });
    return out;
  }
  try {
    const root = tree.rootNode;
    const firstError = walk(root, line, out);
    if (root.hasError) out.unknown.push({ text: firstError || line, why: "the line is not valid bash as the parser reads it" });
  } finally {
    tree.delete();
  }
  return out;
}

/** Nodes that hold no command and no redirection: their insides are not visited. */
const NO_COMMANDS_INSIDE = new Set(["word", "command_name", "raw_string", "ansi_c_string", "number", "variable_name", "string_content", "file_descriptor", "test_operator", "special_variable_name", "comment", ";", "&&", "||", "|", "&"]);

/** Every node, depth first, without recursion (a line can nest thousands deep). */
function walk(root: Node, line: string, out: ParsedLine): string | null {
  let firstError: string | null = null;
  const cursor = root.walk();
  // The type of each ancestor and how many siblings came before each, for the cursor's node.
  const parents: string[] = [];
  const before: number[] = [0];
  try {
    for (;;) {
      const type = cursor.nodeType;
      if (type === "command") readCommand(cursor, line, parents[parents.length - 1], before[before.length - 1]!, out);
      else if (type === "file_redirect") readRedirect(cursor, line, out);
      else if (type === "ERROR") firstError ??= line.slice(cursor.startIndex, cursor.endIndex);
      else if (type === "function_definition" && out.forkBomb === null) out.forkBomb = forkBomb(cursor.currentNode);
      if (!NO_COMMANDS_INSIDE.has(type) && cursor.gotoFirstChild()) {
        parents.push(type);
        before.push(0);
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return firstError;
        parents.pop();
        before.pop();
      }
      before[before.length - 1]!++;
    }
  } finally {
    cursor.delete();
  }
}

/**
 * One simple command, read through the cursor (a Node object per word would cost more than
 * the parse itself on a long line); the cursor is back on the command when it returns.
 */
function readCommand(cursor: TreeCursor, line: string, parent: string | undefined, index: number, out: ParsedLine): void {
  const words: Word[] = [];
  let input: string | null = null;
  let pipedInput = parent === "pipeline" && index > 0;
  const start = cursor.startIndex;
  const end = cursor.endIndex;
  if (cursor.gotoFirstChild()) {
    do {
      if (!cursor.nodeIsNamed) continue;
      const t = cursor.nodeType;
      if (t === "variable_assignment" || t === "comment") continue;
      if (t === "herestring_redirect" || t === "file_redirect") {
        const text = line.slice(cursor.startIndex, cursor.endIndex);
        if (t === "herestring_redirect") {
          const node = cursor.currentNode;
          input = wordOf(node.namedChildren[0] ?? node).value;
          if (input === null) pipedInput = true;
        } else if (/^\d*</.test(text)) pipedInput = true;
        continue;
      }
      if (t === "word" || t === "command_name" && isPlainName(cursor)) {
        const text = line.slice(cursor.startIndex, cursor.endIndex);
        words.push({ text, value: plainValue(text) });
        continue;
      }
      const node = cursor.currentNode;
      words.push(wordOf(t === "command_name" ? (node.namedChildren[0] ?? node) : node));
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  }
  const text = line.slice(start, end);
  // Here-documents belong to the statement around the command.
  if (parent === "redirected_statement") {
    const statement = cursor.currentNode.parent;
    for (const r of statement?.namedChildren ?? []) {
      if (r?.type === "heredoc_redirect") input = heredocText(r);
      else if (r?.type === "herestring_redirect") input = wordOf(r.namedChildren[0] ?? r).value;
      else if (r?.type === "file_redirect" && /^\d*</.test(r.text.trimStart())) pipedInput = true;
    }
  }
  const first = words[0];
  if (first && first.value === null) out.unknown.push({ text, why: "its command word is only known when it runs" });
  out.commands.push({ words, text, input, pipedInput });
}

/** A command_name made of one plain word (the usual case): its text is the word's. */
function isPlainName(cursor: TreeCursor): boolean {
  if (!cursor.gotoFirstChild()) return false;
  const plain = cursor.nodeType === "word" && !cursor.gotoNextSibling();
  cursor.gotoParent();
  return plain;
}

function heredocText(node: Node): string | null {
  const body = node.namedChildren.find((c) => c?.type === "heredoc_body");
  return body ? body.text : "";
}

/** An output redirection (`>`, `>>`, `&>`, `>|`): where it writes. The cursor is back on it when it returns. */
function readRedirect(cursor: TreeCursor, line: string, out: ParsedLine): void {
  const start = cursor.startIndex;
  const end = cursor.endIndex;
  if (!cursor.gotoFirstChild()) return;
  let target: Word | null = null;
  let operator = "";
  do {
    if (cursor.currentFieldName === "destination") {
      target = cursor.nodeType === "word" ? plainWord(line.slice(cursor.startIndex, cursor.endIndex)) : wordOf(cursor.currentNode);
      break;
    }
    operator += line.slice(cursor.startIndex, cursor.endIndex);
  } while (cursor.gotoNextSibling());
  cursor.gotoParent();
  if (target && operator.includes(">")) out.redirects.push({ text: line.slice(start, end), target });
}

const plainWord = (text: string): Word => ({ text, value: plainValue(text) });

/** `f(){ f | f & }; f`: a function whose body runs itself in a pipeline or in the background. */
function forkBomb(node: Node): string | null {
  const name = node.childForFieldName("name")?.text;
  const body = node.childForFieldName("body");
  if (!name || !body || !/[|&]/.test(body.text)) return null;
  const runsItself = body.descendantsOfType("command_name").some((n) => n?.text === name);
  return runsItself ? node.text : null;
}

/** The word's value after quote removal, or null when an expansion decides it ($HOME counts as ~). */
function wordOf(node: Node): Word {
  return { text: node.text, value: valueOf(node) };
}

/** A plain word's value: backslashes removed (a backslash-newline joins lines). */
function plainValue(text: string): string {
  return text.includes("\\") ? text.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1") : text;
}

function valueOf(node: Node): string | null {
  switch (node.type) {
    case "word":
    case "number":
    case "file_descriptor":
      return plainValue(node.text);
    case "raw_string":
      return node.text.slice(1, -1);
    case "ansi_c_string":
      return node.text.slice(2, -1).replace(/\\(.)/gs, (_, c: string) => ({ n: "\n", t: "\t", r: "\r" })[c] ?? c);
    case "string": {
      let value = "";
      for (const child of node.namedChildren) {
        if (!child) continue;
        const v = child.type === "string_content" ? child.text.replace(/\\([$`"\\\n])/g, "$1") : valueOf(child);
        if (v === null) return null;
        value += v;
      }
      return value;
    }
    case "concatenation": {
      let value = "";
      for (const child of node.namedChildren) {
        const v = child ? valueOf(child) : null;
        if (v === null) return null;
        value += v;
      }
      return value;
    }
    case "simple_expansion":
    case "expansion":
      return /^\$\{?HOME\}?$/.test(node.text) ? "~" : null;
    default:
      return null;
  }
}
