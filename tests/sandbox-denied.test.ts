/** The pure detection behind `sandbox_denied` (SPEC §11): table-driven. */
import { describe, expect, test } from "bun:test";
import { detectSandboxDenied } from "../src/sandbox/denied.ts";

const base = { cwd: "/work/p", writableRoots: ["/work/p", "/tmp"], network: true };
const paths = (output: string, extra: Partial<typeof base> = {}) => detectSandboxDenied({ ...base, ...extra, output })?.paths ?? null;

describe("permission errors on paths outside the writable roots", () => {
  const cases: Array<[string, string[]]> = [
    ["touch: cannot touch '/var/tmp/v/x': Read-only file system", ["/var/tmp/v/x"]],
    ["bash: line 1: /var/tmp/v/f: Read-only file system", ["/var/tmp/v/f"]],
    ["bash: /etc/x: Permission denied", ["/etc/x"]],
    ["mkdir: cannot create directory ‘/opt/a’: Read-only file system", ["/opt/a"]],
    ["PermissionError: [Errno 13] Permission denied: '/root/.ssh/id'", ["/root/.ssh/id"]],
    ["OSError: [Errno 30] Read-only file system: '/usr/x'", ["/usr/x"]],
    ["Error: EROFS: read-only file system, open '/home/u/x'", ["/home/u/x"]],
    ["cat: /root/.ssh/id_rsa: Permission denied", ["/root/.ssh/id_rsa"]],
    ["mv: cannot move '/var/tmp/v/a' to '/var/tmp/v/b': Read-only file system", ["/var/tmp/v/a", "/var/tmp/v/b"]],
    ["touch: cannot touch '../outside/x': Read-only file system", ["/work/outside/x"]],
  ];
  for (const [output, expected] of cases) test(output, () => expect(paths(output)).toEqual(expected));
});

describe("not the sandbox's doing", () => {
  test("a permission error inside a writable root (a chmod'ed file) is not reported", () => {
    expect(paths("touch: cannot touch 'mine.txt': Permission denied")).toBeNull();
    expect(paths("bash: /tmp/x: Permission denied")).toBeNull();
  });
  test("output without permission errors is not reported", () => expect(paths("make: *** [all] Error 2")).toBeNull());
  test("a writable root is matched by path segment, not by prefix", () => expect(paths("bash: /work/prod/x: Read-only file system")).toEqual(["/work/prod/x"]));
  test("a network error with the network on is not reported", () => expect(paths("curl: (6) Could not resolve host: example.com")).toBeNull());
});

describe("network off", () => {
  test("a network error gives sandbox_denied with no paths and a hint about sandbox_network", () => {
    const r = detectSandboxDenied({ ...base, network: false, output: "curl: (6) Could not resolve host: example.com" });
    expect(r?.paths).toEqual([]);
    expect(r?.hint).toContain("sandbox_network");
  });
});

test("the hint names both ways forward", () => {
  const r = detectSandboxDenied({ ...base, output: "bash: /etc/x: Permission denied" });
  expect(r?.hint).toContain("sandbox_writable");
  expect(r?.hint).toContain('sandbox: "off"');
  expect(r?.hint).toContain("confirmation");
});
