import { expect, test } from "bun:test";

/**
 * The compiled binary evaluates every Node built-in imported at the top of any module at
 * each start, whatever the verb (Bun hoists them in the bundle). Stream-based built-ins cost
 * milliseconds each there, so the modules that need them import them where they are used.
 */
const CHEAP_AT_START = new Set(["fs", "fs/promises", "path", "os", "bun:ffi"]);

test("the bundle's top-level imports are only cheap built-ins (no net, readline, crypto, stream)", async () => {
  const out = await Bun.build({ entrypoints: ["src/main.ts"], target: "bun", format: "esm" });
  expect(out.success).toBe(true);
  const code = await out.outputs[0]!.text();
  const hoisted = [...code.matchAll(/^import [^;]*? from "([^"]+)";$/gm)].map((m) => m[1]!.replace(/^node:/, ""));
  expect(hoisted.length).toBeGreaterThan(0);
  expect([...new Set(hoisted)].filter((m) => !CHEAP_AT_START.has(m))).toEqual([]);
});
