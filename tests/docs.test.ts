import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { renderToolsDoc } from "../scripts/gen-tools-doc.ts";

test("docs/tools.md is generated from the current schemas (run `bun run docs` after changing a tool)", () => {
  expect(readFileSync(resolve(import.meta.dir, "../docs/tools.md"), "utf8")).toBe(renderToolsDoc());
});
