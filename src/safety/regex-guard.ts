/**
 * Caller-supplied regular expressions run on the server's one event loop, so a pattern
 * with catastrophic backtracking (`^(a+)+$`) would stall every request. JavaScript has no
 * regex timeout; instead, patterns whose quantified groups contain quantifiers (the shape
 * behind exponential backtracking) are refused (and matching sees at most a bounded
 * prefix of each line: see testLine in background/line-splitter.ts).
 */

/** The compiled pattern; throws an Error saying why a pattern is refused. */
export function compileUserRegex(source: string): RegExp {
  let re: RegExp;
  try {
    re = new RegExp(source);
  } catch (e) {
    throw new Error(`invalid regular expression: ${(e as Error).message}`);
  }
  if (hasNestedQuantifier(source)) {
    throw new Error("nested quantifiers such as (a+)+ or (\\w*)* can take exponential time; rewrite the pattern without a repeated group that itself repeats");
  }
  return re;
}

function hasNestedQuantifier(source: string): boolean {
  // For each open group: whether something inside it is quantified.
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      i++;
      if (isQuantifier(source, i + 1) && groups.length) groups[groups.length - 1] = true;
      continue;
    }
    if (inClass) {
      if (c === "]") {
        inClass = false;
        if (isQuantifier(source, i + 1) && groups.length) groups[groups.length - 1] = true;
      }
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") groups.push(false);
    else if (c === ")") {
      const innerQuantified = groups.pop() ?? false;
      if (isUnboundedQuantifier(source, i + 1) && innerQuantified) return true;
      if (isQuantifier(source, i + 1) && groups.length) groups[groups.length - 1] = true;
    } else if (isQuantifier(source, i + 1) && groups.length && c !== "(" && c !== "|") {
      groups[groups.length - 1] = true;
    }
  }
  return false;
}

function isQuantifier(s: string, i: number): boolean {
  return s[i] === "+" || s[i] === "*" || s[i] === "?" || (s[i] === "{" && /^\{\d+(,\d*)?\}/.test(s.slice(i)));
}

function isUnboundedQuantifier(s: string, i: number): boolean {
  return s[i] === "+" || s[i] === "*" || (s[i] === "{" && /^\{\d+,\d*\}/.test(s.slice(i)) && !/^\{\d+,\d+\}/.test(s.slice(i))) || /^\{\d+,(\d{2,})\}/.test(s.slice(i));
}
