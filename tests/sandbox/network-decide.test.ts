/** The proxy's decision (SPEC §21), a pure function: (name, port, rules) → allow | deny | ask. */
import { describe, expect, test } from "bun:test";
import { answerKey, checkAddress, decide, isInternal } from "../../src/sandbox/network/decide.ts";
import { networkRules, parseEntry } from "../../src/sandbox/network/rules.ts";

const rules = (over: Partial<Parameters<typeof networkRules>[0]> = {}) =>
  networkRules({ network_allow: [], network_allow_defaults: true, network_deny: [], network_forward: [], network_publish: true, ...over });

describe("decide", () => {
  const cases: Array<[string, string, number, Partial<Parameters<typeof networkRules>[0]>, "allow" | "deny" | "ask"]> = [
    ["a built-in registry", "registry.npmjs.org", 443, {}, "allow"],
    ["a built-in wildcard", "raw.githubusercontent.com", 443, {}, "allow"],
    ["a wildcard does not cover the domain itself", "githubusercontent.com", 443, {}, "ask"],
    ["the built-in list is dropped", "pypi.org", 443, { network_allow_defaults: false }, "ask"],
    ["an unknown name", "example.org", 443, {}, "ask"],
    ["a listed name, any port", "api.example.org", 8080, { network_allow: ["api.example.org"] }, "allow"],
    ["a listed name, case and trailing dot", "API.Example.org.", 443, { network_allow: ["api.example.org"] }, "allow"],
    ["a listed name on another port", "api.example.org", 80, { network_allow: ["api.example.org:443"] }, "ask"],
    ["a listed wildcard", "a.b.corp.test", 443, { network_allow: ["*.corp.test"] }, "allow"],
    ["deny wins over allow", "api.example.org", 443, { network_allow: ["*.example.org"], network_deny: ["api.example.org"] }, "deny"],
    ["deny wins over the built-in list", "github.com", 443, { network_deny: ["github.com"] }, "deny"],
    ["an IP literal not listed", "93.184.216.34", 443, {}, "deny"],
    ["an IP literal listed", "10.0.0.5", 5432, { network_allow: ["10.0.0.5:5432"] }, "allow"],
    ["the metadata address", "169.254.169.254", 80, {}, "deny"],
    ["an IPv6 literal in brackets", "[::1]", 80, {}, "deny"],
    ["a bad port", "example.org", 0, {}, "deny"],
  ];
  for (const [what, host, port, over, verdict] of cases) {
    test(what, () => expect(decide(host, port, rules(over)).verdict).toBe(verdict));
  }

  test("a name a person allowed for the server's life is allowed, and may reach a private address; deny still wins", () => {
    const life = new Set([answerKey("intranet.test", 443)]);
    expect(decide("intranet.test", 443, rules(), life)).toMatchObject({ verdict: "allow", privateOk: true });
    expect(decide("intranet.test", 443, rules({ network_deny: ["intranet.test"] }), life).verdict).toBe("deny");
  });

  test("the built-in list never reaches a private address; a listed name may", () => {
    const builtIn = decide("github.com", 443, rules());
    expect(builtIn).toMatchObject({ verdict: "allow", privateOk: false });
    expect(checkAddress("127.0.0.1", false)).toContain("network_allow");
    expect(checkAddress("140.82.112.3", false)).toBeNull();
    expect(decide("db.test", 5432, rules({ network_allow: ["db.test"] }))).toMatchObject({ verdict: "allow", privateOk: true });
    expect(checkAddress("10.1.2.3", true)).toBeNull();
  });
});

describe("addresses", () => {
  test("loopback, private, link-local, shared and mapped addresses are internal; public ones are not", () => {
    for (const a of ["127.0.0.1", "10.2.3.4", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1"]) expect([a, isInternal(a)]).toEqual([a, true]);
    for (const a of ["8.8.8.8", "172.32.0.1", "140.82.112.3", "2606:4700::1111", "::ffff:8.8.8.8"]) expect([a, isInternal(a)]).toEqual([a, false]);
  });
});

describe("config entries", () => {
  test("names, wildcards, ports and addresses parse; anything else says what is expected", () => {
    expect(parseEntry("Example.com")).toMatchObject({ host: "example.com", wildcard: false });
    expect(parseEntry("*.example.com:8443")).toMatchObject({ host: "example.com", wildcard: true, port: 8443 });
    expect(parseEntry("[::1]:5432")).toMatchObject({ host: "::1", port: 5432 });
    expect(parseEntry("10.0.0.1")).toMatchObject({ host: "10.0.0.1" });
    for (const bad of ["bad host", "example.com:http", "*.10.0.0.1", "example.com:70000", "http://example.com"]) expect(parseEntry(bad)).toHaveProperty("error");
  });
});
