import type { Item } from "./items.ts";

/**
 * The expected/actual lines of a failed assertion (SPEC §15): what a test runner prints a
 * few lines after the failure (`expected: 4`, `actual: 4.5`, `4.5 !== 4`, a `+ actual -
 * expected` diff). They say nothing alone, so they count as error lines only when they follow one.
 */
const DETAIL = /^\s*(?:(?:[Ee]xpected|[Aa]ctual|[Rr]eceived)\b|[+-] |\S.* (?:!==?|===?) \S)/;
/** How far after an error line (or another detail line) a detail line may follow. */
const FOLLOW = 8;

/** The items with the detail lines that follow an error line marked as errors. */
export function markAssertionDetails(items: Item[]): Item[] {
  let since = Infinity;
  return items.map((it) => {
    if (it.kind !== "line") {
      since = Infinity;
      return it;
    }
    if (it.reports === "error") since = 0;
    else if (++since <= FOLLOW && DETAIL.test(it.text)) {
      since = 0;
      return { ...it, reports: "error" as const };
    }
    return it;
  });
}
