/** Whether a TCP connection to localhost:`port` succeeds (IPv4, then IPv6). */
export async function localPortOpen(port: number): Promise<boolean> {
  for (const hostname of ["127.0.0.1", "::1"]) {
    const ok = await new Promise<boolean>((resolve) => {
      Bun.connect({
        hostname,
        port,
        socket: {
          open(socket) {
            socket.end();
            resolve(true);
          },
          data() {},
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
