/**
 * SPEC §14 caller regexes: the linear-time matcher answers test() exactly like RegExp
 * (a table and a seeded random differential), in linear time on the classic catastrophic
 * patterns, and compileUserRegex routes every pattern to a safe engine or refuses it.
 */
import { describe, expect, test } from "bun:test";
import { compileLinear } from "../../src/safety/regex/linear-regex.ts";
import { compileUserRegex } from "../../src/safety/regex/regex-guard.ts";

const PATTERNS = [
  "abc", "a|b", "^a", "a$", "^$", "a*", "a+b", "a?b", "(ab)+", "(?:ab)*c", "(?<n>x)y", "a{2}", "a{2,}", "a{1,3}b",
  "[abc]", "[^abc]", "[a-z]+\\d", "[\\d.]+", "[\\w-]", "[-a]", "[a-]", "[]", "[^]", ".", ".*x", "\\bword\\b", "\\Bor\\B",
  "\\s+", "\\S", "\\W+$", "\\x41", "\\u00e9", "\\t", "\\.", "\\$", "a{", "x{1,}y", "(a|ab)(c|bcd)(d*)", "^(a+)+$",
  "(a|a)*b", "(\\w+)*$", "colou?r", "err(or)?|warn(ing)?", "^\\s*$", "[\\b]", "\\cJ", "a**?".slice(0, 2) + "?", "(a*)*b",
  "(|a)+b", "^(?:a|b)*?c", "listening on (port )?\\d+", "[^\\s]+@[^\\s]+", "\\0", "a{0}", "(a{2}){2}b",
];
const INPUTS = [
  "", "a", "b", "ab", "abc", "aab", "xaby", "word", "a word here", "sword", "wordy", "   ", "  x ", "A", "é", "\t", ".",
  "$", "a{", "xxxy", "abcd", "abd", "color", "colour", "error", "warning", "warn", "listening on port 8080", "user@host",
  "\u0000", "\b", "\n", "aaaa", "aaaab", "bbbc", "-", "z9", "1.2.3", "a-b", "\u2028",
];

describe("linear matcher agrees with RegExp.test", () => {
  for (const p of PATTERNS) {
    test(`/${p}/`, () => {
      const native = new RegExp(p);
      const linear = compileLinear(p);
      for (const s of INPUTS) expect({ s, got: linear.test(s) }).toEqual({ s, got: native.test(s) });
    });
  }

  test("seeded random patterns and inputs", () => {
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const pieces = ["a", "b", "c", ".", "[ab]", "[^a]", "\\d", "\\w", "\\s", "\\b", "^", "$", "(", ")", "|", "*", "+", "?", "{1,2}", "(?:", "x"];
    let checked = 0;
    for (let k = 0; k < 3000; k++) {
      const p = Array.from({ length: 1 + rnd(8) }, () => pieces[rnd(pieces.length)]).join("");
      let native: RegExp;
      try {
        native = new RegExp(p);
      } catch {
        continue;
      }
      const linear = compileLinear(p);
      for (let j = 0; j < 8; j++) {
        const s = Array.from({ length: rnd(7) }, () => "abc1 x"[rnd(6)]).join("");
        expect({ p, s, got: linear.test(s) }).toEqual({ p, s, got: native.test(s) });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5000);
  });
});

describe("linear time on catastrophic patterns", () => {
  // A backtracking engine would not finish these (2^8000 ways); their cost is measured by bench/guards.ts.
  test.each([["(a|a)*b", false], ["^(a+)+$", true], ["(\\w+)*!", false], ["(a*)*b", false], [".*.*.*.*x", false], ["(x+x+)+y", false]] as const)("%p over 60 lines of 8000 'a' answers (%p)", (p, matches) => {
    const matcher = compileUserRegex(p);
    expect(matcher).toBeInstanceOf(RegExp);
    const line = "a".repeat(8000);
    for (let i = 0; i < 60; i++) expect((matcher as RegExp).test(line)).toBe(matches);
  });
});

/** Why compileUserRegex refuses a pattern ("" when it accepts it). */
function refusal(source: string): string {
  try {
    compileUserRegex(source);
    return "";
  } catch (e) {
    return (e as Error).message;
  }
}

describe("compileUserRegex", () => {
  test("an invalid pattern is refused with the engine's reason", () => {
    expect(refusal("(")).toContain("invalid regular expression");
  });
  test("lookarounds and backreferences run natively only without backtracking risk", () => {
    expect(compileUserRegex("^(?!DEBUG)")).toBeInstanceOf(RegExp);
    expect(compileUserRegex("(\\w)\\1")).toBeInstanceOf(RegExp);
    expect(refusal("(a|a)*\\1")).toContain("repeated alternation");
    expect(refusal("(?=x)(a+)+$")).toContain("nested quantifiers");
    expect(refusal("(?=x).*a.*b")).toContain("more than one unbounded quantifier");
  });
  test("huge repetition counts are refused instead of built", () => {
    expect(refusal("((abc){1000}){1000}")).toContain("too large");
  });
});
