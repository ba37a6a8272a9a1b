/** The pure detection behind `sandbox_denied {kind, paths, hint}` (SPEC §11, §25): table-driven. */
import { describe, expect, test } from "bun:test";
import { detectSandboxDenied, type DeniedInput, type DeniedKind } from "../../src/tools/sandbox/denied.ts";
import { parserReady } from "../../src/safety/parser/bash-parser.ts";

// Command words are read by the bash grammar (loaded by the server before a call needs it).
await parserReady();

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
    expect(r?.kind).toBe("network");
    expect(r?.paths).toEqual([]);
    expect(r?.hint).toContain("sandbox_network");
  });
});

test("the hint names both ways forward", () => {
  const r = detectSandboxDenied({ ...base, output: "bash: /etc/x: Permission denied" });
  expect(r?.kind).toBe("write");
  expect(r?.hint).toContain("sandbox_writable");
  expect(r?.hint).toContain('sandbox: "off"');
  expect(r?.hint).toContain("confirmation");
});

describe("the kind of each refusal, with its own hint", () => {
  const input: DeniedInput = { ...base, hidden: ["/home/u/.ssh", "/home/u/.npmrc", "/home/u/.local/state/agent-shell"], level: "namespaces", output: "" };
  const kind = (output: string, extra: Partial<DeniedInput> = {}) => {
    const r = detectSandboxDenied({ ...input, ...extra, output });
    return r && { kind: r.kind, paths: r.paths };
  };
  const cases: Array<[string, string, Partial<DeniedInput>, { kind: DeniedKind; paths: string[] }]> = [
    ["EROFS", "touch: cannot touch '/usr/x': Read-only file system", {}, { kind: "write", paths: ["/usr/x"] }],
    ["EBUSY", "rm: cannot remove '/etc/hosts': Device or resource busy", {}, { kind: "write", paths: ["/etc/hosts"] }],
    ["ENOENT from a read-only parent (npm -g)", "npm error enoent ENOENT: no such file or directory, mkdir '/usr/lib/node_modules/left-pad'", {}, { kind: "write", paths: ["/usr/lib/node_modules/left-pad"] }],
    ["a message with the path unquoted (git)", "error: could not lock config file /home/u/.gitconfig: Read-only file system", {}, { kind: "write", paths: ["/home/u/.gitconfig"] }],
    ["a relative path outside the project, unquoted (git)", "fatal: cannot mkdir ../origin.git: Read-only file system", {}, { kind: "write", paths: ["/work/origin.git"] }],
    ["Go's lowercase errors (podman's storage)", "Error: mkdir /var/lib/containers/storage/overlay: read-only file system", {}, { kind: "write", paths: ["/var/lib/containers/storage/overlay"] }],
    ["a secret file", "cat: /home/u/.npmrc: Permission denied", {}, { kind: "hidden", paths: ["/home/u/.npmrc"] }],
    ["a file in a hidden folder", "cat: /home/u/.ssh/id_rsa: Permission denied", {}, { kind: "hidden", paths: ["/home/u/.ssh/id_rsa"] }],
    ["agent-shell's state", "ls: cannot open directory '/home/u/.local/state/agent-shell/owners': Permission denied", {}, { kind: "hidden", paths: ["/home/u/.local/state/agent-shell/owners"] }],
    ["tmux", "error connecting to /tmp/tmux-1000/default (Permission denied)", {}, { kind: "socket", paths: ["/tmp/tmux-1000/default"] }],
    [
      "docker",
      'permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.50/containers/json": dial unix /var/run/docker.sock: socket: permission denied',
      {},
      { kind: "socket", paths: ["/var/run/docker.sock"] },
    ],
    ["socat", "2026/11/28 04:00:00 socat[12] E socket(1, 1, 0): Permission denied", {}, { kind: "socket", paths: [] }],
    ["Python's pathless error from socket.py", '  File "/usr/lib/python3.11/socket.py", line 232, in __init__\nPermissionError: [Errno 13] Permission denied', {}, { kind: "socket", paths: [] }],
    ["a setuid program", "sudo: effective uid is not 0, is /usr/bin/sudo on a file system with the 'nosuid' option set?", {}, { kind: "privilege", paths: [] }],
    ["sudo as a command word, past a wrapper", "whatever it printed", { command: "cd x && env A=1 sudo make install" }, { kind: "privilege", paths: [] }],
    ["agent-shell call inside a command", "agent-shell: Error: EROFS: read-only file system, mkdir '/home/u/.local/state'", { command: "/opt/bin/agent-shell call bash '{}'" }, { kind: "daemon", paths: [] }],
    ["agent-shell up", "it failed", { command: "agent-shell up -d" }, { kind: "daemon", paths: [] }],
    ["a host pid", "bash: line 1: kill: (4242) - No such process", {}, { kind: "pid", paths: [] }],
    ["Python's kill of a host pid", "ProcessLookupError: [Errno 3] No such process", {}, { kind: "pid", paths: [] }],
  ];
  for (const [name, output, extra, expected] of cases) test(name, () => expect(kind(output, extra)).toEqual(expected));

  test("agent-shell run stays in the sandbox: not a daemon refusal", () => expect(kind("false", { command: "agent-shell run -- make" })).toBeNull());
  test("`sudo` as an argument is not a privilege refusal", () => expect(kind("grep: x: No such file or directory", { command: "grep sudo x" })).toBeNull());
  test("no such process at the Landlock level (no pid namespace) is not the sandbox's doing", () =>
    expect(kind("bash: kill: (4242) - No such process", { level: "landlock" })).toBeNull());
  test("the most specific kind wins when one output shows several", () =>
    expect(kind("cat: /home/u/.npmrc: Permission denied\ntouch: cannot touch '/usr/x': Read-only file system")?.kind).toBe("hidden"));

  test("each kind's hint says its own way forward", () => {
    const hint = (output: string, extra: Partial<DeniedInput> = {}) => detectSandboxDenied({ ...input, ...extra, output })!.hint;
    expect(hint("cat: /home/u/.npmrc: Permission denied")).not.toContain("sandbox_writable");
    expect(hint("error connecting to /tmp/t/default (Permission denied)")).toContain("sandbox_allow_unix_sockets");
    expect(hint("x", { command: "sudo true" })).toContain("Ask the user to run this command themselves");
    expect(hint("x", { command: "agent-shell start web -- npm run dev" })).toContain("bash {service:");
    expect(hint("bash: kill: (4242) - No such process")).toContain("kill_shell");
  });
});
