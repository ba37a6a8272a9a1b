import { describe, expect, test } from "bun:test";
import { localPortOpen } from "../../src/runtime/local/port-probe.ts";
import { portProbeScript } from "../../src/runtime/ssh/scripts.ts";

/** A free TCP port on loopback, found by binding port 0. */
function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** The remote probe as an SSH host runs it: the script under bash, exit 0 when open. */
async function remoteProbe(port: number): Promise<boolean> {
  const p = Bun.spawn(["bash", "-c", portProbeScript(port)], { stdio: ["ignore", "ignore", "ignore"] });
  return (await p.exited) === 0;
}

const probes = { local: localPortOpen, "remote (ssh script)": remoteProbe };

describe.each(Object.entries(probes))("%s port probe", (_name, probe) => {
  test("a closed port is not open", async () => {
    expect(await probe(freePort())).toBe(false);
  });

  test("probing never resets a connection: a node server with no socket error handler survives 200 probes", async () => {
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
      for (let i = 0; i < 200 && server.exitCode === null; i++) {
        if (await probe(port)) open++;
        await Bun.sleep(i % 5); // varied gaps: the reset needs the greeting to arrive before the hang-up
      }
      // A reset reaches the server after its probe returned: a last probe finds it dead or alive.
      const openAfter = await probe(port);
      const stderr = server.exitCode === null ? "" : await new Response(server.stderr).text();
      expect({ open, openAfter, exit: server.exitCode, stderr }).toEqual({ open: 200, openAfter: true, exit: null, stderr: "" });
    } finally {
      server.kill("SIGKILL");
      await server.exited;
    }
  });
});
