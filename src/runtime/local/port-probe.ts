/** How long a probe's connection waits for the service to close its side before closing anyway. */
const LINGER_MS = 2000;

/**
 * Whether a TCP connection to localhost:`port` succeeds (IPv4, then IPv6).
 *
 * The probe hangs up politely: it sends FIN and reads until the service closes too. Bun's
 * `end()` on a socket the service has already written to (a database greeting) resets the
 * connection, and a service with no error handler on its sockets (a small node server)
 * dies of the ECONNRESET: the probe would kill what it waits for.
 */
export async function localPortOpen(port: number): Promise<boolean> {
  for (const hostname of ["127.0.0.1", "::1"]) {
    const ok = await new Promise<boolean>((resolve) => {
      Bun.connect({
        hostname,
        port,
        socket: {
          open(socket) {
            resolve(true);
            socket.shutdown(); // our FIN; the socket still reads
            setTimeout(() => socket.end(), LINGER_MS).unref();
          },
          data() {},
          end(socket) {
            socket.end(); // both sides have said FIN: closes without a reset
          },
          error() {
            resolve(false);
          },
          connectError() {
            resolve(false);
          },
        },
      }).catch(() => resolve(false));
    });
    if (ok) return true;
  }
  return false;
}
