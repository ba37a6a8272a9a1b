import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { renderToolsDoc } from "../../scripts/gen-tools-doc.ts";
import { ConfigSchema, HostSchema } from "../../src/config/schema.ts";

test("docs/tools.md is generated from the current schemas (run `bun run docs` after changing a tool)", () => {
  expect(readFileSync(resolve(import.meta.dir, "../../docs/tools.md"), "utf8")).toBe(renderToolsDoc());
});

test("docs/configuration.md names every key the server and a host accept", () => {
  const page = readFileSync(resolve(import.meta.dir, "../../docs/configuration.md"), "utf8");
  const keys = [...Object.keys(ConfigSchema.shape), ...Object.keys(HostSchema.shape).map((k) => `hosts.${k}`)];
  const missing = keys.filter((k) => !page.includes("| `" + k.replace(/^hosts\./, "") + "` |"));
  expect(missing).toEqual([]);
  // Every server key but the file-only tables has its AGENT_SHELL_<KEY> variable on the page.
  const fileOnly = new Set(["hosts", "rules"]);
  const noEnv = Object.keys(ConfigSchema.shape).filter((k) => !fileOnly.has(k) && !page.includes("`AGENT_SHELL_" + k.toUpperCase() + "`"));
  expect(noEnv).toEqual([]);
});

test("README.md is a front page: at most 300 lines, linking every docs/ page", () => {
  const readme = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");
  expect(readme.split("\n").length).toBeLessThanOrEqual(300);
  const pages = readdirSync(resolve(import.meta.dir, "../../docs")).filter((f) => f.endsWith(".md"));
  expect(pages.filter((p) => !readme.includes(`(docs/${p})`))).toEqual([]);
  // The quick start that .ci/run and a fresh clone rely on.
  expect(readme).toContain("npm install -g bun@1.4.4 && bun install && bun run demo");
  expect(readme).toContain("bun run test ");
});
