import { describe, expect, test } from "bun:test";
import { homedir } from "node:os";
import { expandHome } from "../../src/expand-home.ts";

describe("expandHome (allowed_paths, identity_file, known_hosts)", () => {
  test("~ and ~/x use $HOME", () => {
    expect(expandHome("~", { HOME: "/h" })).toBe("/h");
    expect(expandHome("~/keys/id", { HOME: "/h" })).toBe("/h/keys/id");
  });
  test("an unset or empty HOME falls back to the account's home directory", () => {
    expect(expandHome("~/x", {})).toBe(`${homedir()}/x`);
    expect(expandHome("~/x", { HOME: "" })).toBe(`${homedir()}/x`);
  });
  test("other paths are left as they are", () => {
    for (const p of ["/abs", "rel/~", "~user/x", "~x", ""]) expect(expandHome(p, { HOME: "/h" })).toBe(p);
  });
});
