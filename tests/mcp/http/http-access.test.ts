/** SPEC §17: who may use `mcp --http` — the bearer token and the Origin allow-list (pure checks). */
import { describe, expect, test } from "bun:test";
import { boundHosts, normalizeHost, normalizeOrigin, preflight, refusal } from "../../../src/mcp/http/access.ts";
import { parseListen } from "../../../src/cli/http-mcp.ts";

const access = { token: "s3cret-token-0123456789", allowedOrigins: new Set(["https://app.example"]), ...boundHosts("127.0.0.1") };
const req = (headers: Record<string, string>, method = "POST") => new Request("http://127.0.0.1:1/mcp", { method, headers: { Host: "127.0.0.1:1", ...headers } });

describe("refusal", () => {
  test.each([
    [{}, 401],
    [{ Authorization: "Bearer" }, 401],
    [{ Authorization: "Bearer s3cret-token-012345678" }, 401], // one byte short
    [{ Authorization: "Bearer s3cret-token-01234567890" }, 401], // one byte more
    [{ Authorization: "Bearer S3CRET-TOKEN-0123456789" }, 401], // tokens are case-sensitive
    [{ Authorization: "Token s3cret-token-0123456789" }, 401],
    [{ Authorization: "Bearer s3cret-token-0123456789 extra" }, 401],
    [{ Authorization: "Bearer s3cret-token-0123456789", Origin: "https://evil.example" }, 403],
    [{ Origin: "https://evil.example" }, 403], // the Origin is refused before the token is looked at
  ] as Array<[Record<string, string>, number]>)("%j → %d", (headers, status) => {
    expect(refusal(req(headers), access)?.status).toBe(status);
  });

  test.each([
    { Authorization: "Bearer s3cret-token-0123456789" },
    { Authorization: "bearer   s3cret-token-0123456789" },
    { Authorization: "Bearer s3cret-token-0123456789", Origin: "https://APP.example/" },
  ] as Array<Record<string, string>>)("%j passes", (headers) => {
    expect(refusal(req(headers), access)).toBeUndefined();
  });

  test("a 401 names the header and carries WWW-Authenticate: Bearer", async () => {
    const r = refusal(req({}), access)!;
    expect(r.headers.get("www-authenticate")).toStartWith("Bearer");
    expect(((await r.json()) as any).error.message).toContain("Authorization: Bearer");
  });
});

test("preflight: an allowed origin gets CORS headers without a token; another gets 403", () => {
  const ok = preflight(req({ Origin: "https://app.example" }, "OPTIONS"), access);
  expect(ok.status).toBe(204);
  expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example");
  expect(ok.headers.get("access-control-expose-headers")).toContain("mcp-session-id");
  expect(preflight(req({ Origin: "https://evil.example" }, "OPTIONS"), access).status).toBe(403);
});

describe("the Host header (DNS rebinding: a page on evil.example resolved to 127.0.0.1 still sends Host: evil.example)", () => {
  const token = { Authorization: "Bearer s3cret-token-0123456789" };
  const on = (bound: string, allow: string[] = []) => ({ ...access, ...boundHosts(bound, allow) });

  test.each([
    ["127.0.0.1", "evil.example:8080"],
    ["127.0.0.1", "127.0.0.1.evil.example"],
    ["127.0.0.1", "localhost.evil.example:1"],
    ["127.0.0.1", "10.0.0.5:1"], // another address: not the one bound
    ["10.0.0.5", "localhost:1"], // localhost is not this server when it is bound elsewhere
    ["0.0.0.0", "evil.example:1"], // every address bound: still no foreign name
    ["::", "evil.example"],
  ])("bound to %s, Host %s → 403 naming the Host and --allow-host, even with the token", async (bound, host) => {
    const r = refusal(req({ ...token, Host: host }), on(bound))!;
    expect(r.status).toBe(403);
    const message = ((await r.json()) as any).error.message as string;
    expect(message).toContain(`Host '${host}' is not allowed`);
    expect(message).toContain("--allow-host");
  });

  test("a request without a Host header is refused (403)", () => {
    const r = refusal(new Request("http://127.0.0.1:1/mcp", { method: "POST", headers: token }), access);
    expect(r?.status).toBe(403);
  });

  test.each([
    ["127.0.0.1", "127.0.0.1:8080"],
    ["127.0.0.1", "localhost:8080"],
    ["127.0.0.1", "LOCALHOST."],
    ["127.0.0.1", "[::1]:8080"],
    ["::1", "[::1]:8080"],
    ["::1", "localhost:8080"],
    ["localhost", "127.0.0.1:9"],
    ["10.0.0.5", "10.0.0.5:8080"],
    ["0.0.0.0", "192.168.1.20:8080"], // bound to every address: reached by any of its IPs
    ["::", "[fe80::1]:8080"],
  ])("bound to %s, Host %s passes", (bound, host) => {
    expect(refusal(req({ ...token, Host: host }), on(bound))).toBeUndefined();
  });

  test("--allow-host adds a name (port and case ignored); others stay refused", () => {
    const allowed = on("0.0.0.0", ["Agent.Example.com:443"]);
    expect(refusal(req({ ...token, Host: "agent.example.com" }), allowed)).toBeUndefined();
    expect(refusal(req({ ...token, Host: "other.example.com" }), allowed)?.status).toBe(403);
  });

  test("a preflight from an allowed origin to a foreign Host gets 403", () => {
    expect(preflight(req({ Origin: "https://app.example", Host: "evil.example" }, "OPTIONS"), access).status).toBe(403);
  });

  test("normalizeHost", () => {
    expect([normalizeHost("EXAMPLE.com.:8080"), normalizeHost("[::1]:9"), normalizeHost("[::1]"), normalizeHost("h")]).toEqual(["example.com", "[::1]", "[::1]", "h"]);
  });
});

test("normalizeOrigin: case and a trailing slash do not matter", () => {
  expect(normalizeOrigin(" HTTPS://App.Example:8443/ ")).toBe("https://app.example:8443");
});

describe("--http [HOST:]PORT", () => {
  test.each([
    ["8080", { hostname: "127.0.0.1", port: 8080 }],
    ["0", { hostname: "127.0.0.1", port: 0 }],
    ["0.0.0.0:80", { hostname: "0.0.0.0", port: 80 }],
    ["localhost:9", { hostname: "localhost", port: 9 }],
    ["[::1]:9", { hostname: "::1", port: 9 }],
  ])("%s", (value, expected) => {
    expect(parseListen(value)).toEqual(expected);
  });

  test.each(["", "x", ":80", "::1:9", "1.2.3.4:99999", "80:host"])("%j is a usage error naming the form", (value) => {
    expect(() => parseListen(value)).toThrow("[HOST:]PORT");
  });
});
