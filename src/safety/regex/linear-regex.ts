/**
 * A regular-expression matcher that runs in linear time: the pattern becomes a Thompson
 * NFA and every possible match is advanced together, one input character at a time (a
 * Pike VM without captures). A JavaScript RegExp backtracks, so `(a|a)*b` or `(\w+)*$`
 * can take exponential time on one line, and the server has a single event loop; this
 * matcher visits each (character, state) pair at most once, whatever the pattern.
 *
 * It answers only "does the line match anywhere" (RegExp.test without flags), which is
 * what filters and watches ask, so greedy and lazy quantifiers are the same here.
 * Backreferences and lookarounds are not regular: parseLinear reports them unsupported.
 *
 * (Kept over re2js, a port of RE2, measured on the same patterns and lines: re2js matched
 * long lines against alternations 2–5× faster, but compiled each pattern 2–45× slower, and
 * is 260 KB more to load; a pattern here is compiled per call, and matched on a result's lines.)
 */

type CharTest = (c: number) => boolean;
type Node =
  | { t: "char"; test: CharTest; code?: number } // code: the one code unit it accepts, if only one
  | { t: "assert"; kind: "^" | "$" | "b" | "B" }
  | { t: "seq"; items: Node[] }
  | { t: "alt"; options: Node[] }
  | { t: "repeat"; node: Node; min: number; max: number } // max Infinity for unbounded
  | { t: "empty" };

export class UnsupportedSyntax extends Error {}

const isWordChar: CharTest = (c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isDigit: CharTest = (c) => c >= 48 && c <= 57;
const isSpace: CharTest = (c) =>
  (c >= 9 && c <= 13) || c === 32 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
const isLineTerminator = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
const not = (f: CharTest): CharTest => (c) => !f(c);
const exactly = (x: number): CharTest => (c) => c === x;
const literal = (x: number): { t: "char"; test: CharTest; code: number } => ({ t: "char", test: exactly(x), code: x });

class Parser {
  private i = 0;
  quantified = false;
  constructor(private readonly s: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.i < this.s.length) throw new UnsupportedSyntax(`unexpected '${this.s[this.i]}'`);
    return node;
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.s[this.i] === "|") {
      this.i++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0]! : { t: "alt", options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.i < this.s.length && this.s[this.i] !== "|" && this.s[this.i] !== ")") {
      const atom = this.atom();
      items.push(this.quantifier(atom));
    }
    return items.length === 1 ? items[0]! : { t: "seq", items };
  }

  private quantifier(atom: Node): Node {
    const c = this.s[this.i];
    let min: number, max: number;
    if (c === "*") [min, max] = [0, Infinity];
    else if (c === "+") [min, max] = [1, Infinity];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i, this.i + 32));
      if (!m) return atom; // a literal brace (annex B)
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      this.i += m[0].length - 1;
    } else return atom;
    this.i++;
    if (this.s[this.i] === "?") this.i++; // lazy: same answer for test()
    if (atom.t === "assert") return atom; // a quantified assertion asserts at most once
    this.quantified = true;
    return { t: "repeat", node: atom, min, max };
  }

  private atom(): Node {
    const c = this.s[this.i++]!;
    switch (c) {
      case "(": {
        if (this.s[this.i] === "?") {
          if (this.s.startsWith("?:", this.i)) this.i += 2;
          else if (this.s[this.i + 1] === "<" && this.s[this.i + 2] !== "=" && this.s[this.i + 2] !== "!") {
            const close = this.s.indexOf(">", this.i);
            this.i = close + 1;
          } else throw new UnsupportedSyntax("lookaround or modifier group");
        }
        const inner = this.alternation();
        if (this.s[this.i] !== ")") throw new UnsupportedSyntax("unbalanced group");
        this.i++;
        return inner;
      }
      case ".":
        return { t: "char", test: not(isLineTerminator) };
      case "^":
        return { t: "assert", kind: "^" };
      case "$":
        return { t: "assert", kind: "$" };
      case "[":
        return { t: "char", test: this.charClass() };
      case "\\":
        return this.escape(false);
      default:
        return literal(c.charCodeAt(0));
    }
  }

  /** After a backslash. In a class, `\b` is a backspace and assertions do not exist. */
  private escape(inClass: boolean): Node & { t: "char" | "assert" } {
    const c = this.s[this.i++];
    if (c === undefined) throw new UnsupportedSyntax("trailing backslash");
    switch (c) {
      case "d": return { t: "char", test: isDigit };
      case "D": return { t: "char", test: not(isDigit) };
      case "w": return { t: "char", test: isWordChar };
      case "W": return { t: "char", test: not(isWordChar) };
      case "s": return { t: "char", test: isSpace };
      case "S": return { t: "char", test: not(isSpace) };
      case "t": return { t: "char", test: exactly(9) };
      case "n": return { t: "char", test: exactly(10) };
      case "r": return { t: "char", test: exactly(13) };
      case "v": return { t: "char", test: exactly(11) };
      case "f": return { t: "char", test: exactly(12) };
      case "b": return inClass ? { t: "char", test: exactly(8) } : { t: "assert", kind: "b" };
      case "B":
        if (inClass) throw new UnsupportedSyntax("\\B in a class");
        return { t: "assert", kind: "B" };
      case "x":
      case "u": {
        const len = c === "x" ? 2 : 4;
        const hex = this.s.slice(this.i, this.i + len);
        if (/^[0-9a-fA-F]+$/.test(hex) && hex.length === len) {
          this.i += len;
          return { t: "char", test: exactly(parseInt(hex, 16)) };
        }
        return { t: "char", test: exactly(c.charCodeAt(0)) };
      }
      case "c": {
        const letter = this.s[this.i];
        if (letter && /[a-zA-Z]/.test(letter)) {
          this.i++;
          return { t: "char", test: exactly(letter.charCodeAt(0) % 32) };
        }
        throw new UnsupportedSyntax("\\c without a letter");
      }
      case "k":
        throw new UnsupportedSyntax("backreference");
      default:
        if (c >= "1" && c <= "9" && !inClass) throw new UnsupportedSyntax("backreference");
        if (c >= "0" && c <= "9") {
          if (c === "0" && !/[0-9]/.test(this.s[this.i] ?? "")) return { t: "char", test: exactly(0) };
          throw new UnsupportedSyntax("octal escape");
        }
        return literal(c.charCodeAt(0));
    }
  }

  private charClass(): CharTest {
    const negated = this.s[this.i] === "^";
    if (negated) this.i++;
    const tests: CharTest[] = [];
    const ranges: [number, number][] = [];
    while (this.i < this.s.length && this.s[this.i] !== "]") {
      const lo = this.classAtom();
      if (this.s[this.i] === "-" && this.s[this.i + 1] !== "]" && this.i + 1 < this.s.length && typeof lo === "number") {
        this.i++;
        const hi = this.classAtom();
        if (typeof hi !== "number") {
          // `[a-\d]` (annex B): a, '-', and the set
          ranges.push([lo, lo], [45, 45]);
          tests.push(hi);
        } else ranges.push([lo, hi]);
      } else if (typeof lo === "number") ranges.push([lo, lo]);
      else tests.push(lo);
    }
    if (this.s[this.i] !== "]") throw new UnsupportedSyntax("unterminated class");
    this.i++;
    const inSet = (c: number) => {
      for (const [lo, hi] of ranges) if (c >= lo && c <= hi) return true;
      for (const t of tests) if (t(c)) return true;
      return false;
    };
    return negated ? not(inSet) : inSet;
  }

  /** One class member: a code unit, or a set such as \d. */
  private classAtom(): number | CharTest {
    const c = this.s[this.i++]!;
    if (c !== "\\") return c.charCodeAt(0);
    const escaped = this.s[this.i];
    if (escaped === "-") {
      this.i++;
      return 45;
    }
    const node = this.escape(true);
    if (node.t !== "char") throw new UnsupportedSyntax("assertion in a class");
    // Sets stay tests; single-character escapes become code units so they can bound a range.
    if ("dDwWsS".includes(escaped ?? "")) return node.test;
    return firstAccepted(node.test);
  }
}

/** The one code unit a single-character test accepts. */
function firstAccepted(test: CharTest): number {
  for (let c = 0; c < 0x10000; c++) if (test(c)) return c;
  return 0;
}

// ---- program ----

const CHAR = 0, SPLIT = 1, JMP = 2, ASSERT = 3, MATCH = 4;
type Inst = { op: number; x: number; y: number; test?: CharTest; kind?: string };

/** Programs beyond this size (from large {n,m} counts) are refused rather than built. */
export const MAX_PROGRAM = 20_000;

class Compiler {
  prog: Inst[] = [];
  emit(i: Inst): number {
    if (this.prog.length >= MAX_PROGRAM) throw new UnsupportedSyntax("too large");
    this.prog.push(i);
    return this.prog.length - 1;
  }
  node(n: Node): void {
    switch (n.t) {
      case "empty":
        return;
      case "char":
        this.emit({ op: CHAR, x: 0, y: 0, test: n.test });
        return;
      case "assert":
        this.emit({ op: ASSERT, x: 0, y: 0, kind: n.kind });
        return;
      case "seq":
        for (const item of n.items) this.node(item);
        return;
      case "alt": {
        const jumps: number[] = [];
        for (let k = 0; k < n.options.length; k++) {
          const last = k === n.options.length - 1;
          const split = last ? -1 : this.emit({ op: SPLIT, x: 0, y: 0 });
          if (split >= 0) this.prog[split]!.x = this.prog.length;
          this.node(n.options[k]!);
          if (!last) jumps.push(this.emit({ op: JMP, x: 0, y: 0 }));
          if (split >= 0) this.prog[split]!.y = this.prog.length;
        }
        for (const j of jumps) this.prog[j]!.x = this.prog.length;
        return;
      }
      case "repeat": {
        for (let k = 0; k < n.min; k++) this.node(n.node);
        if (n.max === Infinity) {
          const split = this.emit({ op: SPLIT, x: 0, y: 0 });
          this.prog[split]!.x = this.prog.length;
          this.node(n.node);
          this.emit({ op: JMP, x: split, y: 0 });
          this.prog[split]!.y = this.prog.length;
          return;
        }
        const splits: number[] = [];
        for (let k = n.min; k < n.max; k++) {
          const split = this.emit({ op: SPLIT, x: 0, y: 0 });
          this.prog[split]!.x = this.prog.length;
          splits.push(split);
          this.node(n.node);
        }
        for (const s of splits) this.prog[s]!.y = this.prog.length;
        return;
      }
    }
  }
}

export type LinearMatcher = {
  /** Whether the pattern matches anywhere in the text. */
  test(text: string): boolean;
  /** Whether the pattern has any quantifier (without one, a backtracking engine is linear too). */
  quantified: boolean;
};

/** The linear matcher for a pattern, or UnsupportedSyntax for what it cannot express. */
export function compileLinear(source: string): LinearMatcher {
  const parser = new Parser(source);
  const ast = parser.parse();
  const compiler = new Compiler();
  compiler.node(ast);
  compiler.emit({ op: MATCH, x: 0, y: 0 });
  const prog = compiler.prog;
  const anchored = prog[0]!.op === ASSERT && prog[0]!.kind === "^";
  // A character every match must contain: lines without it are rejected by a native scan.
  const must = requiredCode(ast);
  const needle = must === null ? null : String.fromCharCode(must);
  return { test: (text) => (needle === null || text.includes(needle)) && run(prog, text, anchored), quantified: parser.quantified };
}

function run(prog: Inst[], text: string, anchored: boolean): boolean {
  const n = prog.length;
  let clist = new Int32Array(n);
  let nlist = new Int32Array(n);
  let ccount = 0;
  let ncount = 0;
  const mark = new Int32Array(n).fill(-1);
  const stack = new Int32Array(n * 2 + 2);
  const len = text.length;

  /** Follows jumps, splits and assertions from pc at position pos; true on reaching MATCH. */
  const add = (list: Int32Array, count: number, pc0: number, pos: number): number => {
    let sp = 0;
    stack[sp++] = pc0;
    while (sp > 0) {
      const pc = stack[--sp]!;
      if (mark[pc] === pos) continue;
      mark[pc] = pos;
      const inst = prog[pc]!;
      switch (inst.op) {
        case JMP:
          stack[sp++] = inst.x;
          break;
        case SPLIT:
          stack[sp++] = inst.y;
          stack[sp++] = inst.x;
          break;
        case ASSERT:
          if (holds(inst.kind!, text, pos, len)) stack[sp++] = pc + 1;
          break;
        case MATCH:
          return -1;
        default:
          list[count++] = pc;
      }
    }
    return count;
  };

  for (let pos = 0; ; pos++) {
    if (!anchored || pos === 0) {
      ccount = add(clist, ccount, 0, pos);
      if (ccount < 0) return true;
    }
    if (pos >= len || (ccount === 0 && anchored)) return false;
    const c = text.charCodeAt(pos);
    ncount = 0;
    for (let k = 0; k < ccount; k++) {
      const pc = clist[k]!;
      if (prog[pc]!.test!(c)) {
        ncount = add(nlist, ncount, pc + 1, pos + 1);
        if (ncount < 0) return true;
      }
    }
    [clist, nlist] = [nlist, clist];
    ccount = ncount;
  }
}

/** A code unit that every match of `node` contains, or null if there is none to be sure of. */
function requiredCode(node: Node): number | null {
  switch (node.t) {
    case "char":
      return node.code ?? null;
    case "seq":
      for (const item of node.items) {
        const code = requiredCode(item);
        if (code !== null) return code;
      }
      return null;
    case "repeat":
      return node.min >= 1 ? requiredCode(node.node) : null;
    default:
      return null;
  }
}

function holds(kind: string, text: string, pos: number, len: number): boolean {
  if (kind === "^") return pos === 0;
  if (kind === "$") return pos === len;
  const before = pos > 0 && isWordChar(text.charCodeAt(pos - 1));
  const after = pos < len && isWordChar(text.charCodeAt(pos));
  return kind === "b" ? before !== after : before === after;
}
