import { expect, test } from "bun:test";
import { localPortOpen } from "../src/runtime/port-probe.ts";

/** A free TCP port on loopback, found by binding port 0. */
function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

test("a closed port is not open", async () => {
  expect(await localPortOpen(freePort())).toBe(false);
});

test("probing never resets a connection: a node server with no socket error handler survives 300 probes", async () => {
  const port = freePort();
  // Greets and hangs up at once, like a database stand-in: a reset kills it (ECONNRESET, unhandled).
  const server = Bun.spawn(["node", "-e", `require("net").createServer((s) => s.end("db")).listen(${port}, "127.0.0.1", () => console.log("up"))`], {
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const reader = server.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("up");
    reader.releaseLock();
    let open = 0;
    for (let i = 0; i < 300 && server.exitCode === null; i++) {
      if (await localPortOpen(port)) open++;
      await Bun.sleep(i % 5); // varied gaps: the reset needs the greeting to arrive before the hang-up
    }
    // A reset reaches the server after its probe returned: a last probe finds it dead or alive.
    const openAfter = await localPortOpen(port);
    const stderr = server.exitCode === null ? "" : await new Response(server.stderr).text();
    expect({ open, openAfter, exit: server.exitCode, stderr }).toEqual({ open: 300, openAfter: true, exit: null, stderr: "" });
  } finally {
    server.kill("SIGKILL");
    await server.exited;
  }
});
