/**
 * SPEC §14: the daemon enforces allowed paths itself, per connection. A raw client on the
 * socket that declares nothing runs only in the daemon's configured allowed paths, never
 * in `/`; a client that declares its directory runs there, and cannot widen another's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { readDaemonToken } from "../../../src/mcp/daemon/daemon-token.ts";
import { SocketTransport } from "../../../src/mcp/transports/socket-transport.ts";
import { cliSandbox, type CliSandbox } from "../../helpers/cli.ts";

/** An SDK client on the daemon's socket whose first line is `hello(token)`. */
async function rawClient(sb: CliSandbox, hello: (token: string) => string) {
  const sock = join(sb.stateDir, "daemon.sock");
  const socket = connect(sock);
  await new Promise((r) => socket.once("connect", r));
  const client = new Client({ name: "scope-test", version: "0" });
  await client.connect(new SocketTransport(socket, { send: hello(readDaemonToken(sock)) }));
  const call = async (args: Record<string, unknown>) => (await client.callTool({ name: "bash", arguments: args })).structuredContent as Record<string, any>;
  return { call, close: () => client.close() };
}

describe("a daemon with no allowed_paths configured", () => {
  let sb: CliSandbox;
  beforeAll(async () => {
    sb = cliSandbox();
    await sb.run(["daemon", "start"]);
  });
  afterAll(async () => {
    await sb.close();
  });

  test("a raw client that declares nothing runs no local command, in / or elsewhere", async () => {
    const c = await rawClient(sb, (token) => token);
    try {
      for (const args of [{ command: "pwd" }, { command: "pwd", working_directory: "/" }]) {
        const r = await c.call(args);
        expect(r.error_code).toBe("ACCESS_DENIED");
        expect(r.error).toContain("declared no working directory");
      }
    } finally {
      await c.close();
    }
  });

  test("a client that declares its directory runs there and not outside it; another connection's wider roots do not help", async () => {
    const mine = realpathSync(sb.cwd);
    const other = join(mine, "..", `as-scope-other-${process.pid}`);
    mkdirSync(other, { recursive: true });
    const wide = await rawClient(sb, (token) => JSON.stringify({ token, cwd: mine, allow: [other] }));
    const narrow = await rawClient(sb, (token) => JSON.stringify({ token, cwd: mine }));
    try {
      expect((await narrow.call({ command: "pwd" })).stdout).toBe(`${mine}\n`);
      expect((await wide.call({ command: "pwd", working_directory: other })).stdout).toBe(`${realpathSync(other)}\n`);
      const denied = await narrow.call({ command: "pwd", working_directory: other });
      expect(denied.error_code).toBe("ACCESS_DENIED");
      expect(denied.error).toContain("outside allowed paths");
      expect((await narrow.call({ command: "pwd", working_directory: "/" })).error_code).toBe("ACCESS_DENIED");
    } finally {
      await wide.close();
      await narrow.close();
      Bun.spawnSync(["rm", "-rf", other]);
    }
  });
});

describe("a daemon with allowed_paths configured", () => {
  test("a raw client that declares nothing runs in those paths only", async () => {
    const sb = cliSandbox();
    const allowed = realpathSync(join(sb.cwd));
    const config = join(sb.stateDir, "..", `as-scope-config-${process.pid}.toml`);
    writeFileSync(config, `allowed_paths = [${JSON.stringify(allowed)}]\n`);
    try {
      await sb.run(["daemon", "start", "--config", config]);
      const c = await rawClient(sb, (token) => token);
      try {
        expect((await c.call({ command: "pwd" })).stdout).toBe(`${allowed}\n`);
        const r = await c.call({ command: "pwd", working_directory: "/" });
        expect(r.error_code).toBe("ACCESS_DENIED");
        expect(r.error).toContain("outside allowed paths");
      } finally {
        await c.close();
      }
    } finally {
      await sb.close();
      Bun.spawnSync(["rm", "-f", config]);
    }
  });
});
