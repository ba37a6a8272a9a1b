/**
 * The network by name (SPEC §21), against the compiled binary: names this test adds to
 * /etc/hosts (removed again in afterAll, whatever happened) point at servers of its own on
 * 127.0.0.1, which count what reaches them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { appendFileSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createTcpServer } from "node:net";
import { createSocket } from "node:dgram";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";

const tag = Math.random().toString(36).slice(2, 8);
const NAMES = { allowed: `allowed-${tag}.test`, wild: `api.wild-${tag}.test`, unknown: `unknown-${tag}.test`, denied: `denied-${tag}.test`, git: `git-${tag}.test` };
const HOSTS_LINES = Object.values(NAMES).map((n) => `127.0.0.1 ${n} # agent-shell network test ${tag}\n`);

let hits: Record<string, number> = {};
let http: ReturnType<typeof Bun.serve>;
let https: ReturnType<typeof Bun.serve>;
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "as-net-")));

function removeHostsLines(): void {
  const text = readFileSync("/etc/hosts", "utf8");
  writeFileSync("/etc/hosts", text.split("\n").filter((l) => !l.includes(`agent-shell network test ${tag}`)).join("\n"));
}

beforeAll(() => {
  appendFileSync("/etc/hosts", HOSTS_LINES.join(""));
  const handler = (req: Request) => {
    const host = (req.headers.get("host") ?? "").replace(/:\d+$/, "");
    hits[host] = (hits[host] ?? 0) + 1;
    return new Response(`hello from ${host}\n`);
  };
  http = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler });
  const cert = selfSigned();
  https = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler, tls: cert });
});

afterAll(() => {
  removeHostsLines();
  http?.stop(true);
  https?.stop(true);
  rmSync(scratch, { recursive: true, force: true });
});

function selfSigned(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "as-net-cert-"));
  try {
    const r = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", join(dir, "k.pem"), "-out", join(dir, "c.pem")], { stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    return { cert: readFileSync(join(dir, "c.pem"), "utf8"), key: readFileSync(join(dir, "k.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function configFile(lines: string): string {
  const path = join(scratch, `config-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(path, lines);
  return path;
}

async function withServer<T>(config: string, fn: (t: McpSession) => Promise<T>, opts: Parameters<typeof startServer>[0] = {}): Promise<T> {
  const t = await startServer({ ...opts, args: ["--config", configFile(config), ...(opts.args ?? [])] });
  try {
    return await fn(t);
  } finally {
    await t.close();
  }
}

const allowList = (...names: string[]) => `network_allow = [${names.map((n) => JSON.stringify(n)).join(", ")}]\n`;

describe("allowed names", () => {
  test("an allowed name is reached by curl over http and https (through CONNECT), and a wildcard entry covers a name under it", async () => {
    hits = {};
    await withServer(allowList(NAMES.allowed, `*.wild-${tag}.test`), async (t) => {
      const r = await t.call("bash", { command: `curl -sS --max-time 5 http://${NAMES.allowed}:${http.port}/ && curl -sSk --max-time 5 https://${NAMES.allowed}:${https.port}/ && curl -sS --max-time 5 http://${NAMES.wild}:${http.port}/` });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe(`hello from ${NAMES.allowed}\nhello from ${NAMES.allowed}\nhello from ${NAMES.wild}\n`);
      expect(r.exit_code).toBe(0);
      expect(r.network_denied).toBeUndefined();
    });
    expect(hits[NAMES.allowed]).toBe(2);
    expect(hits[NAMES.wild]).toBe(1);
  });
});

describe("names nobody allowed", () => {
  test("a client that cannot elicit: refused within 2 s, nothing reaches the server, the result names the host and network_allow", async () => {
    hits = {};
    await withServer("", async (t) => {
      let log = "";
      t.transport.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
      const started = performance.now();
      const r = await t.call("bash", { command: `curl -sS --max-time 20 http://${NAMES.unknown}:${http.port}/` });
      expect(performance.now() - started).toBeLessThan(2000);
      expect(r.stdout).toContain(`agent-shell refused the connection to ${NAMES.unknown}:${http.port}`);
      expect(r.stdout).toContain("network_allow");
      expect(r.network_denied).toEqual([expect.objectContaining({ host: NAMES.unknown, port: http.port })]);
      expect(r.sandbox_denied).toMatchObject({ kind: "network", paths: [] });
      expect(r.sandbox_denied.hint).toContain("network_allow");
      // The server's log records the decision: time, host, port and command.
      const line = log.split("\n").find((l) => l.includes(`refused ${NAMES.unknown}:${http.port}`));
      expect(line).toMatch(/^agent-shell: network \d{4}-\d\d-\d\dT[\d:.]+Z refused /);
      expect(line).toContain(`curl -sS --max-time 20 http://${NAMES.unknown}`);
    });
    expect(hits[NAMES.unknown]).toBeUndefined();
  });
});

/** A client whose person answers each network question with `answer`, keeping the questions. */
function person(answer: "once" | "always" | "no" | "decline", readingMs = 0) {
  const questions: string[] = [];
  return {
    questions,
    opts: {
      capabilities: { elicitation: { form: {} } },
      setup(c: import("@modelcontextprotocol/sdk/client/index.js").Client) {
        c.setRequestHandler(ElicitRequestSchema, async (request) => {
          questions.push((request.params as { message: string }).message);
          if (readingMs) await Bun.sleep(readingMs); // a person reading the question
          return answer === "decline" ? { action: "decline" } : { action: "accept", content: { answer } };
        });
      },
    },
  };
}

describe("a person is asked", () => {
  test("the question names the host, the port and the command; 'once' reaches the server, 'no' refuses", async () => {
    hits = {};
    const yes = person("once");
    await withServer("", async (t) => {
      const r = await t.call("bash", { command: `curl -sS --max-time 10 http://${NAMES.unknown}:${http.port}/` });
      expect(r.stdout).toBe(`hello from ${NAMES.unknown}\n`);
    }, yes.opts);
    expect(yes.questions).toHaveLength(1);
    expect(yes.questions[0]).toContain(`${NAMES.unknown} port ${http.port}`);
    expect(yes.questions[0]).toContain("127.0.0.1"); // told it is an address on this machine
    expect(yes.questions[0]).toContain(`curl -sS --max-time 10 http://${NAMES.unknown}`);
    expect(hits[NAMES.unknown]).toBe(1);
    const no = person("decline");
    await withServer("", async (t) => {
      const r = await t.call("bash", { command: `curl -sS --max-time 10 http://${NAMES.unknown}:${http.port}/` });
      expect(r.stdout).toContain("agent-shell refused");
      expect(r.network_denied).toEqual([expect.objectContaining({ host: NAMES.unknown, port: http.port })]);
    }, no.opts);
    expect(no.questions).toHaveLength(1);
    expect(hits[NAMES.unknown]).toBe(1);
  });

  test("'always' allows the name for the server's life: asked once for two commands", async () => {
    hits = {};
    const always = person("always");
    await withServer("", async (t) => {
      for (let i = 0; i < 2; i++) {
        const r = await t.call("bash", { command: `curl -sS --max-time 10 http://${NAMES.unknown}:${http.port}/` });
        expect(r.stdout).toBe(`hello from ${NAMES.unknown}\n`);
      }
    }, always.opts);
    expect(always.questions).toHaveLength(1);
    expect(hits[NAMES.unknown]).toBe(2);
  });

  test("connections made to one name while its question is open share the answer: asked once", async () => {
    hits = {};
    const yes = person("once", 1000);
    await withServer("", async (t) => {
      const url = `http://${NAMES.unknown}:${http.port}/`;
      const r = await t.call("bash", { command: `curl -sS --max-time 10 ${url} & curl -sS --max-time 10 ${url} & curl -sS --max-time 10 ${url} & wait` });
      expect(r.stdout).toBe(`hello from ${NAMES.unknown}\n`.repeat(3));
    }, yes.opts);
    expect(yes.questions).toHaveLength(1);
    expect(hits[NAMES.unknown]).toBe(3);
  });

  test("network_deny wins over a person's yes and over network_allow: nobody is asked", async () => {
    hits = {};
    const yes = person("always");
    await withServer(allowList(NAMES.denied) + `network_deny = ["${NAMES.denied}"]\n`, async (t) => {
      const r = await t.call("bash", { command: `curl -sS --max-time 10 http://${NAMES.denied}:${http.port}/` });
      expect(r.stdout).toContain(`agent-shell refused the connection to ${NAMES.denied}:${http.port}: network_deny lists`);
    }, yes.opts);
    expect(yes.questions).toHaveLength(0);
    expect(hits[NAMES.denied]).toBeUndefined();
  });
});

describe("tools through the proxy", () => {
  test("git clone over http, Python's urllib and curl over SOCKS5 reach an allowed name", async () => {
    const repo = join(scratch, "origin");
    const bare = join(scratch, "served", "repo.git");
    const git = (args: string[], cwd: string) => {
      const r = Bun.spawnSync(["git", ...args], { cwd, stderr: "pipe", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
      if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    };
    Bun.spawnSync(["mkdir", "-p", repo, join(scratch, "served")]);
    git(["init", "-q", "-b", "main"], repo);
    writeFileSync(join(repo, "README"), "cloned through the proxy\n");
    git(["add", "README"], repo);
    git(["commit", "-qm", "one"], repo);
    git(["clone", "-q", "--bare", repo, bare], scratch);
    git(["update-server-info"], bare);
    // A dumb-http server: the bare repository's files as they are.
    const files = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => new Response(Bun.file(join(scratch, "served", new URL(req.url).pathname))) });
    try {
      await withServer(allowList(NAMES.git, NAMES.allowed), async (t) => {
        const r = await t.call("bash", {
          command: `git clone -q http://${NAMES.git}:${files.port}/repo.git cloned && cat cloned/README && python3 -c "import urllib.request; print(urllib.request.urlopen('http://${NAMES.allowed}:${http.port}/').read().decode(), end='')" && curl -sS --max-time 5 --socks5-hostname 127.0.0.1:3128 http://${NAMES.allowed}:${http.port}/`,
        });
        expect(r.stderr).toBe("");
        expect(r.stdout).toBe(`cloned through the proxy\nhello from ${NAMES.allowed}\nhello from ${NAMES.allowed}\n`);
      });
    } finally {
      files.stop(true);
    }
  });
});

/** A TCP and a UDP listener that count what reaches them (on `host`). */
async function counters(host: string) {
  const counts = { tcp: 0, udp: 0 };
  const tcp = createTcpServer((s) => {
    counts.tcp++;
    s.destroy();
  });
  await new Promise<void>((done) => tcp.listen(0, host, done));
  const udp = createSocket(host.includes(":") ? "udp6" : "udp4");
  udp.on("message", () => counts.udp++);
  await new Promise<void>((done) => udp.bind(0, host, done));
  return { counts, tcpPort: (tcp.address() as { port: number }).port, udpPort: udp.address().port, close: () => (tcp.close(), udp.close()) };
}

/** This machine's first non-loopback IPv4 address (a routable one, as far as the sandbox knows). */
function routableAddress(): string | null {
  for (const list of Object.values(require("node:os").networkInterfaces() as Record<string, { family: string; address: string; internal: boolean }[]>)) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return null;
}

describe("nothing goes around the proxy", () => {
  test("curl --noproxy, raw TCP to the host's loopback and to a routable address, and UDP reach nothing", async () => {
    const lo = await counters("127.0.0.1");
    const routable = routableAddress();
    const out = routable ? await counters(routable) : null;
    try {
      await withServer(allowList(NAMES.allowed), async (t) => {
        const probes = [
          `curl -sS --max-time 3 --noproxy '*' http://${NAMES.allowed}:${lo.tcpPort}/ && echo REACHED`,
          `(exec 3<>/dev/tcp/127.0.0.1/${lo.tcpPort}) && echo REACHED`,
          `python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('127.0.0.1', ${lo.udpPort}))" && echo SENT`,
          ...(out ? [`(exec 3<>/dev/tcp/${routable}/${out.tcpPort}) && echo REACHED`, `python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('${routable}', ${out.udpPort}))" && echo SENT`] : []),
        ];
        for (const command of probes) {
          const r = await t.call("bash", { command: `timeout 5 bash -c ${JSON.stringify(command)}` });
          expect(r.stdout).not.toContain("REACHED");
        }
      });
      await Bun.sleep(200); // a datagram in flight would have arrived by now (none is expected)
      expect(lo.counts).toEqual({ tcp: 0, udp: 0 });
      if (out) expect(out.counts).toEqual({ tcp: 0, udp: 0 });
    } finally {
      lo.close();
      out?.close();
    }
  });

  test('network = "off" reaches nothing; "on" is the shared network; a confirmed sandbox: "off" lifts the policy for its call', async () => {
    const lo = await counters("127.0.0.1");
    try {
      await withServer(`network = "off"\n` + allowList(NAMES.allowed), async (t) => {
        const r = await t.call("bash", { command: `curl -sS --max-time 3 http://${NAMES.allowed}:${lo.tcpPort}/; (exec 3<>/dev/tcp/127.0.0.1/${lo.tcpPort}) && echo REACHED; env | grep -ci _proxy` });
        expect(r.stdout).not.toContain("REACHED");
        expect(r.stdout.trim().split("\n").pop()).toBe("0");
      });
      expect(lo.counts.tcp).toBe(0);
      await withServer(`network = "on"\n`, async (t) => {
        const r = await t.call("bash", { command: `(exec 3<>/dev/tcp/127.0.0.1/${lo.tcpPort}) && echo REACHED` });
        expect(r.stdout).toBe("REACHED\n");
      });
      expect(lo.counts.tcp).toBe(1);
      // A call's confirmed sandbox: "off" lifts the network policy for that call only.
      await withServer("", async (t) => {
        const args = { command: `(exec 3<>/dev/tcp/127.0.0.1/${lo.tcpPort}) && echo REACHED`, sandbox: "off" };
        expect((await t.call("bash", args)).needs_confirmation).toBe(true);
        expect((await t.call("bash", { ...args, confirmed: true })).stdout).toBe("REACHED\n");
      });
      expect(lo.counts.tcp).toBe(2);
    } finally {
      lo.close();
    }
  });
});

describe("the loopback both ways", () => {
  test("a dev server started in the background is ready by ready_port, reached by a later command and from the host on the same port", async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    await withServer("", async (t) => {
      writeFileSync(join(t.cwd, "index.html"), "dev server\n");
      const started = await t.call("bash", { command: `python3 -m http.server ${port} --bind 127.0.0.1`, run_in_background: true, ready_port: port, ready_timeout_seconds: 20 });
      expect(started.ready).toBe(true);
      const inside = await t.call("bash", { command: `curl -sS --max-time 5 http://127.0.0.1:${port}/index.html` });
      expect(inside.stdout).toBe("dev server\n");
      const outside = await fetch(`http://127.0.0.1:${port}/index.html`);
      expect(await outside.text()).toBe("dev server\n");
      await t.call("kill_shell", { task_id: started.task_id });
    });
  });

  test("network_forward makes a host service reachable inside on the same port", async () => {
    const service = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("host service\n") });
    try {
      await withServer(`network_forward = [${service.port}]\n`, async (t) => {
        const r = await t.call("bash", { command: `curl -sS --max-time 5 http://127.0.0.1:${service.port}/` });
        expect(r.stdout).toBe("host service\n");
      });
    } finally {
      service.stop(true);
    }
  });
});

describe("the Landlock level", () => {
  test("commands connect only to the proxy: an allowed name is reached, the host's loopback is not", async () => {
    hits = {};
    const lo = await counters("127.0.0.1");
    try {
      await withServer(allowList(NAMES.allowed), async (t) => {
        const r = await t.call("bash", { command: `curl -sS --max-time 5 http://${NAMES.allowed}:${http.port}/; (exec 3<>/dev/tcp/127.0.0.1/${lo.tcpPort}) 2>/dev/null && echo REACHED; true` });
        expect(r.sandbox_level).toBe("landlock");
        expect(r.stdout).toBe(`hello from ${NAMES.allowed}\n`);
      }, { env: { AGENT_SHELL_SANDBOX_LEVEL: "landlock" } });
      expect(hits[NAMES.allowed]).toBe(1);
      expect(lo.counts.tcp).toBe(0);
    } finally {
      lo.close();
    }
  });
});
