/**
 * SPEC §17: `agent-shell mcp --http` — the Streamable HTTP transport: the bearer token on
 * every request, Origin checks, sessions over one registry with their own confirmations,
 * a closed or expired session's foreground work ended, resumable SSE streams.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HttpServer, INITIALIZE, post, startHttpServer } from "../../helpers/http-mcp.ts";
import { processes, uniqueSleep, waitNoProcess } from "../../helpers/procs.ts";

setDefaultTimeout(60_000);

let server: HttpServer;
const ORIGIN = "http://app.example.test";

beforeAll(async () => {
  server = await startHttpServer(["--allow-origin", ORIGIN]);
});
afterAll(async () => {
  await server?.close();
});

/** Resolves once `sleep MARKER` itself runs. */
async function sleepRunning(marker: string): Promise<number> {
  for (;;) {
    const p = processes().find((q) => q.cmdline === `sleep ${marker}`);
    if (p) return p.pid;
    await Bun.sleep(20);
  }
}

/** The JSON-RPC messages of an SSE body (or a JSON body). */
async function messages(res: Response): Promise<any[]> {
  const text = await res.text();
  if (!res.headers.get("content-type")?.includes("text/event-stream")) return [JSON.parse(text)];
  return text
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l.length > 6)
    .map((l) => JSON.parse(l.slice(6)));
}

describe("access", () => {
  test("no token and a wrong token get 401; the right token 200", async () => {
    const none = await post(server.url, INITIALIZE);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect(((await none.json()) as any).error.message).toContain("Authorization: Bearer");
    const wrong = await post(server.url, INITIALIZE, { Authorization: `Bearer ${server.token}x` });
    expect(wrong.status).toBe(401);
    await wrong.body?.cancel();
    const basic = await post(server.url, INITIALIZE, { Authorization: `Basic ${btoa(`u:${server.token}`)}` });
    expect(basic.status).toBe(401);
    await basic.body?.cancel();
    const right = await post(server.url, INITIALIZE, { Authorization: `Bearer ${server.token}` });
    expect(right.status).toBe(200);
    expect(right.headers.get("mcp-session-id")).toBeTruthy();
    const [init] = await messages(right);
    expect(init.result.serverInfo.name).toBe("agent-shell");
    expect(init.result.protocolVersion).toBe("2025-11-25");
  });

  test("a GET, a DELETE and an unknown session need the token too", async () => {
    for (const method of ["GET", "DELETE"]) {
      const r = await fetch(server.url, { method, headers: { "mcp-session-id": "whatever" } });
      expect({ method, status: r.status }).toEqual({ method, status: 401 });
      await r.body?.cancel();
    }
    const unknown = await post(server.url, { jsonrpc: "2.0", id: 2, method: "ping" }, { Authorization: `Bearer ${server.token}`, "mcp-session-id": "no-such-session" });
    expect(unknown.status).toBe(404);
    await unknown.body?.cancel();
  });

  test("a foreign Origin gets 403 even with the token; an allowed one passes, with CORS headers", async () => {
    const foreign = await post(server.url, INITIALIZE, { Authorization: `Bearer ${server.token}`, Origin: "http://evil.example.com" });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as any).error.message).toContain("--allow-origin");
    const allowed = await post(server.url, INITIALIZE, { Authorization: `Bearer ${server.token}`, Origin: ORIGIN });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    await allowed.body?.cancel();
    const preflight = await fetch(server.url, { method: "OPTIONS", headers: { Origin: ORIGIN, "Access-Control-Request-Method": "POST" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
  });

  test("a foreign Host gets 403 even with the token (DNS rebinding); 127.0.0.1, localhost and --allow-host names pass", async () => {
    const port = new URL(server.url).port;
    const auth = { Authorization: `Bearer ${server.token}` };
    const foreign = await post(server.url, INITIALIZE, { ...auth, Host: `rebind.evil.example:${port}` });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as any).error.message).toContain(`Host 'rebind.evil.example:${port}' is not allowed`);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const ok = await post(server.url, INITIALIZE, { ...auth, Host: host });
      expect(ok.status).toBe(200);
      await ok.body?.cancel();
    }
    const proxied = await startHttpServer(["--allow-host", "agent.example.test"]);
    try {
      const named = await post(proxied.url, INITIALIZE, { Authorization: `Bearer ${proxied.token}`, Host: "agent.example.test" });
      expect(named.status).toBe(200);
      await named.body?.cancel();
      const other = await post(proxied.url, INITIALIZE, { Authorization: `Bearer ${proxied.token}`, Host: "other.example.test" });
      expect(other.status).toBe(403);
      await other.body?.cancel();
    } finally {
      await proxied.close();
    }
  });

  test("only /mcp is served", async () => {
    const r = await fetch(server.url.replace(/\/mcp$/, "/other"), { headers: { Authorization: `Bearer ${server.token}` } });
    expect(r.status).toBe(404);
    await r.body?.cancel();
  });
});

describe("sessions", () => {
  test("the SDK client (StreamableHTTPClientTransport with the header) lists the tools and runs a command", async () => {
    const { client } = await server.connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["bash", "kill_shell", "task", "task_list", "task_output", "write_stdin"]);
    const r: any = await client.callTool({ name: "bash", arguments: { command: "echo over-http; exit 3" } });
    expect(r.structuredContent).toMatchObject({ exit_code: 3, stdout: "over-http\n", sandbox: "workspace-write" });
    expect(r.isError).toBeFalsy();
  });

  test("a background task started in one session is listed and awaited in another", async () => {
    const one = await server.connect();
    const two = await server.connect();
    expect(one.transport.sessionId).not.toBe(two.transport.sessionId);
    const started: any = (await one.client.callTool({ name: "bash", arguments: { command: "sleep 0.3; echo shared; exit 6", run_in_background: true } }))
      .structuredContent;
    const listed: any = (await two.client.callTool({ name: "task_list", arguments: {} })).structuredContent;
    expect(JSON.stringify(listed)).toContain(started.task_id);
    const done: any = (await two.client.callTool({ name: "task_output", arguments: { task_id: started.task_id, wait: true, timeout: 30 } })).structuredContent;
    expect(done).toMatchObject({ status: "completed", exit_code: 6, stdout: "shared\n" });
  });

  test("confirmations stay with their session", async () => {
    const one = await server.connect();
    const two = await server.connect();
    const args = { command: "rm -f nothing.txt && echo ran" };
    const call = async (c: typeof one, a: Record<string, unknown>) => (await c.client.callTool({ name: "bash", arguments: a })).structuredContent as any;
    expect((await call(one, args)).needs_confirmation).toBe(true);
    expect((await call(two, { ...args, confirmed: true })).error_code).toBe("BLOCKED");
    expect((await call(one, { ...args, confirmed: true })).stdout).toBe("ran\n");
  });

  test("terminating a session (DELETE) kills its running foreground command; its background task lives on", async () => {
    const { client, transport } = await server.connect();
    const bg = uniqueSleep();
    const fg = uniqueSleep();
    const background: any = (await client.callTool({ name: "bash", arguments: { command: `sleep ${bg}`, run_in_background: true } })).structuredContent;
    const call = client.callTool({ name: "bash", arguments: { command: `sleep ${fg}` } }).catch((e: Error) => e);
    const pid = await sleepRunning(fg);
    const session = transport.sessionId!;
    await transport.terminateSession();
    expect(await waitNoProcess(`sleep ${fg}`)).toEqual([]);
    expect(processes().some((p) => p.pid === pid)).toBe(false);
    await transport.close();
    await call;
    // The session is gone: its id gets 404 (the client must initialize again).
    const after = await post(server.url, { jsonrpc: "2.0", id: 9, method: "ping" }, { Authorization: `Bearer ${server.token}`, "mcp-session-id": session });
    expect(after.status).toBe(404);
    await after.body?.cancel();
    // Background work belongs to the server's registry, not to the session.
    const other = await server.connect();
    const status: any = (await other.client.callTool({ name: "task_output", arguments: { task_id: background.task_id } })).structuredContent;
    expect({ status: status.status, exit_code: status.exit_code, signal: status.signal }).toEqual({ status: "running", exit_code: undefined, signal: undefined });
    await other.client.callTool({ name: "kill_shell", arguments: { task_id: background.task_id } });
    expect(await waitNoProcess(`sleep ${bg}`)).toEqual([]);
  });

  test("an SSE stream that broke is resumed with Last-Event-ID and delivers the result", async () => {
    const auth = { Authorization: `Bearer ${server.token}` };
    const init = await post(server.url, INITIALIZE, auth);
    const session = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const headers = { ...auth, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    await (await post(server.url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).body?.cancel();
    const marker = uniqueSleep(1);
    const aborter = new AbortController();
    const call = await post(
      server.url,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "bash", arguments: { command: `sleep ${marker}; echo resumed` } } },
      headers,
      aborter.signal,
    );
    expect(call.headers.get("content-type")).toContain("text/event-stream");
    // Read up to the first event id (the stream's priming event), then drop the connection.
    const reader = call.body!.getReader();
    let seen = "";
    while (!/^id: (\S+)$/m.test(seen)) seen += new TextDecoder().decode((await reader.read()).value);
    const lastEventId = seen.match(/^id: (\S+)$/m)![1]!;
    aborter.abort();
    await reader.cancel().catch(() => {});
    const resumed = await fetch(server.url, { method: "GET", headers: { ...headers, accept: "text/event-stream", "last-event-id": lastEventId } });
    expect(resumed.status).toBe(200);
    const reply = (await messages(resumed)).find((m) => m.id === 7);
    expect(reply.result.structuredContent).toMatchObject({ exit_code: 0, stdout: "resumed\n" });
    await (await fetch(server.url, { method: "DELETE", headers })).body?.cancel();
  });
});

describe("server options", () => {
  let dir: string;
  beforeAll(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "as-http-token-")));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("--token-file: that token is required, and none is printed", async () => {
    const token = "file-token-0123456789abcdef";
    writeFileSync(join(dir, "token"), `${token}\n`, { mode: 0o600 });
    const s = await startHttpServer(["--token-file", join(dir, "token")], { token });
    try {
      expect(s.stderr()).not.toContain(token);
      expect(s.stderr()).not.toContain("token (send");
      const { client } = await s.connect();
      const r: any = await client.callTool({ name: "bash", arguments: { command: "echo with-file-token" } });
      expect(r.structuredContent.stdout).toBe("with-file-token\n");
      const printedLess = await post(s.url, INITIALIZE, { Authorization: "Bearer something-else-entirely" });
      expect(printedLess.status).toBe(401);
      await printedLess.body?.cancel();
    } finally {
      await s.close();
    }
  });

  test("a session nobody uses any more expires, and its foreground command is ended", async () => {
    const s = await startHttpServer(["--session-timeout", "1"]);
    try {
      const auth = { Authorization: `Bearer ${s.token}` };
      const init = await post(s.url, INITIALIZE, auth);
      const session = init.headers.get("mcp-session-id")!;
      await init.body?.cancel();
      const headers = { ...auth, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
      await (await post(s.url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).body?.cancel();
      const marker = uniqueSleep();
      const aborter = new AbortController();
      const call = post(s.url, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "bash", arguments: { command: `sleep ${marker}` } } }, headers, aborter.signal);
      const pid = await sleepRunning(marker);
      // The client vanishes: its stream closes and it never comes back.
      aborter.abort();
      await call.catch(() => {});
      expect(await waitNoProcess(`sleep ${marker}`, 10_000)).toEqual([]);
      expect(processes().some((p) => p.pid === pid)).toBe(false);
      const after = await post(s.url, { jsonrpc: "2.0", id: 4, method: "ping" }, headers);
      expect(after.status).toBe(404);
      await after.body?.cancel();
    } finally {
      await s.close();
    }
  });

  test("bad --http values and flags without --http are usage errors (exit 2)", async () => {
    const { BINARY } = await import("../../helpers/mcp.ts");
    for (const args of [["--http", "nope"], ["--http", "70000"], ["--token-file", "x"], ["--http", "0", "--shared"], ["--http", "0", "--token-file", join(dir, "missing")]]) {
      const p = Bun.spawn([BINARY, "mcp", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
      expect({ args, code }).toEqual({ args, code: 2 });
      expect(err).toMatch(/^agent-shell: /);
    }
  });
});
