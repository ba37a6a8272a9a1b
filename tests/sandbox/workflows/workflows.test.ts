/**
 * SPEC §25: ordinary developer steps run through agent-shell with the default sandbox behave
 * as in a terminal, or are refused with a message that says the sandbox did it and what to do
 * (tests/sandbox/workflows/steps.ts). No row may be "refused, unclear" or "silently different".
 */
import { expect, test } from "bun:test";
import { startServer } from "../../helpers/mcp.ts";
import { runWorkflows } from "./steps.ts";

test("every ordinary step works as in a terminal or is refused with its reason", async () => {
  const rows = await runWorkflows((opts) => startServer(opts));
  const bad = rows.filter((r) => r.verdict === "refused, unclear" || r.verdict === "silently different").map((r) => `${r.step.area} / ${r.step.name}: ${r.verdict} (${r.detail})`);
  expect(bad).toEqual([]);
  expect(rows.filter((r) => r.verdict === "as in a terminal").length).toBeGreaterThan(20);
}, 600_000);
