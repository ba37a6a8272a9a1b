import { createServer } from "node:http";
/**
 * The loopback file server of the download log: deterministic files on 127.0.0.1, sent in
 * paced chunks so curl and the Python downloader draw their progress bars many times.
 */
function bytes(seed: number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const FILES: Record<string, { body: Uint8Array; chunks: number; pauseMs: number }> = {
  "/tokenizer.json": { body: new TextEncoder().encode(JSON.stringify({ vocab: Array.from({ length: 60_000 }, (_, i) => `tok${i}`) })), chunks: 40, pauseMs: 40 },
  "/model-00001.bin": { body: bytes(1, 6_000_000), chunks: 60, pauseMs: 5 },
  "/model-00002.bin": { body: bytes(2, 6_000_000), chunks: 60, pauseMs: 5 },
  "/model-00003.bin": { body: bytes(3, 6_000_000), chunks: 60, pauseMs: 5 },
};

/** Serves FILES on 127.0.0.1 (node:http: Bun.serve sends a stream chunked, without the Content-Length progress bars need). */
export async function startFileServer() {
  const server = createServer(async (req, res) => {
    const file = FILES[new URL(req.url ?? "/", "http://x").pathname];
    if (!file) return void res.writeHead(404).end("not found\n");
    res.writeHead(200, { "Content-Length": String(file.body.length), "Content-Type": "application/octet-stream" });
    const size = Math.ceil(file.body.length / file.chunks);
    for (let at = 0; at < file.body.length; at += size) {
      if (at > 0) await Bun.sleep(file.pauseMs);
      if (!res.write(file.body.subarray(at, at + size))) await new Promise((r) => res.once("drain", r));
    }
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
