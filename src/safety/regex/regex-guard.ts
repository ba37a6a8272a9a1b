/**
 * Caller-supplied regular expressions (`filter`, `notify_pattern`, `ready_pattern`) run on
 * the server's one event loop, and JavaScript has no regex timeout, so a backtracking
 * pattern such as `(a|a)*b` would stall every request (SPEC §14). The choice here: every
 * pattern with a quantifier runs on the linear-time matcher (safety/regex/linear-regex.ts), which
 * cannot backtrack; a time budget was rejected because a single native match cannot be
 * interrupted. Patterns without any quantifier keep the native engine (linear for them,
 * and faster). Backreferences and lookarounds are not regular: such patterns run natively
 * only when they have at most one unbounded quantifier, none nested and no alternation
 * repeated, and each line is cut to MAX_MATCH_CHARS (background/output/lines.ts).
 */
import { compileLinear, UnsupportedSyntax, type LinearMatcher } from "./linear-regex.ts";

/** A RegExp whose test() is answered by the linear matcher (exec() is never used on it). */
class LinearRegExp extends RegExp {
  private matcher?: LinearMatcher;
  static of(source: string, matcher: LinearMatcher): LinearRegExp {
    const re = new LinearRegExp(source);
    re.matcher = matcher;
    return re;
  }
  override test(text: string): boolean {
    return this.matcher ? this.matcher.test(text) : super.test(text);
  }
}

/** The compiled pattern; throws an Error saying why a pattern is refused. */
export function compileUserRegex(source: string): RegExp {
  let re: RegExp;
  try {
    re = new RegExp(source);
  } catch (e) {
    throw new Error(`invalid regular expression: ${(e as Error).message}`);
  }
  try {
    const linear = compileLinear(source);
    return linear.quantified ? LinearRegExp.of(source, linear) : re;
  } catch (e) {
    if (!(e instanceof UnsupportedSyntax)) throw e;
    if (e.message === "too large") throw new Error("the pattern's repetition counts are too large; use smaller {n,m} bounds");
  }
  const risk = backtrackingRisk(source);
  if (risk) {
    throw new Error(`${risk}; with backreferences or lookarounds the pattern runs on a backtracking engine, where this can take exponential time: rewrite it without them, or simplify the repetition`);
  }
  return re;
}

/**
 * Shapes behind super-linear backtracking: a quantified group that contains a quantifier or
 * an alternation, or more than one unbounded quantifier. Null when none is present.
 */
export function backtrackingRisk(source: string): string | null {
  // For each open group: whether something inside it is quantified or alternated.
  const groups: { quantified: boolean; alternated: boolean }[] = [];
  let unbounded = 0;
  let inClass = false;
  const markQuantified = () => {
    if (groups.length) groups[groups.length - 1]!.quantified = true;
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      i++;
      if (isQuantifier(source, i + 1)) markQuantified();
      if (isUnboundedQuantifier(source, i + 1)) unbounded++;
      continue;
    }
    if (inClass) {
      if (c === "]") {
        inClass = false;
        if (isQuantifier(source, i + 1)) markQuantified();
        if (isUnboundedQuantifier(source, i + 1)) unbounded++;
      }
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") groups.push({ quantified: false, alternated: false });
    else if (c === "|") {
      if (groups.length) groups[groups.length - 1]!.alternated = true;
    } else if (c === ")") {
      const inner = groups.pop() ?? { quantified: false, alternated: false };
      if (isUnboundedQuantifier(source, i + 1)) {
        unbounded++;
        if (inner.quantified) return "nested quantifiers such as (a+)+ or (\\w*)*";
        if (inner.alternated) return "a repeated alternation such as (a|a)*";
      }
      if (isQuantifier(source, i + 1)) markQuantified();
      if (inner.quantified && groups.length) markQuantified();
    } else if (isQuantifier(source, i + 1)) {
      markQuantified();
      if (isUnboundedQuantifier(source, i + 1)) unbounded++;
    }
    if (unbounded > 1) return "more than one unbounded quantifier (such as .*x.*)";
  }
  return null;
}

function isQuantifier(s: string, i: number): boolean {
  return s[i] === "+" || s[i] === "*" || s[i] === "?" || (s[i] === "{" && /^\{\d+(,\d*)?\}/.test(s.slice(i, i + 24)));
}

function isUnboundedQuantifier(s: string, i: number): boolean {
  return s[i] === "+" || s[i] === "*" || (s[i] === "{" && /^\{\d+,\}/.test(s.slice(i, i + 24)));
}
