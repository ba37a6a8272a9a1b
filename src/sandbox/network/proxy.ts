import type { Socket, TCPSocketListener } from "bun";
import { admit, refusalText } from "./gate.ts";
import { connectAndJoin, joinHandlers, newSide, type Side } from "./join.ts";
import type { NetworkRules } from "./rules.ts";

/** The most a request head (HTTP) or handshake may take before the proxy gives up on it. */
const MAX_HEAD = 64 * 1024;

/**
 * The proxy, listening on `where` (a socket a relay made inside a sandbox, or the host's
 * loopback). Each connection a command makes is HTTP `CONNECT host:port`, a plain HTTP
 * request in absolute form (`GET http://host/…`), or SOCKS5 (told by its first byte). The
 * name is admitted (gate.ts), then the proxy connects to the address it checked and joins the
 * two. A refusal answers with the host and how to allow it (HTTP 403, SOCKS "not allowed by
 * ruleset").
 */
export function listenProxy(where: { fd: number } | { hostname: string; port: number }, policy: object, rules: NetworkRules): TCPSocketListener<Side> {
  return Bun.listen<Side>({
    ...where,
    socket: {
      ...joinHandlers,
      open(client: Socket<Side>) {
        client.data = newSide(readHead(policy, rules));
      },
    },
  } as never);
}

function readHead(policy: object, rules: NetworkRules): Side["onData"] {
  let head = Buffer.alloc(0);
  let greeted = false;
  return (client, chunk) => {
    head = Buffer.concat([head, chunk]);
    // SOCKS5's greeting is answered before the client sends its request: no authentication.
    if (head[0] === 5 && !greeted && head.length >= 2 && head.length >= 2 + head[1]!) {
      greeted = true;
      client.write(Buffer.from([5, 0]));
    }
    const step = head[0] === 5 ? socksRequest(head) : httpRequest(head);
    if (step === "more" && head.length < MAX_HEAD) return;
    // What comes after the head while the name is decided (a request body) waits.
    const after: Uint8Array[] = [];
    client.data.onData = (_s, more) => void after.push(new Uint8Array(more));
    if (step === "more" || "error" in step) return badRequest(client, head[0] === 5, step === "more" ? "request too long" : step.error);
    void open(client, policy, rules, step, after);
  };
}

interface Step {
  host: string;
  port: number;
  socks: boolean;
  /** Said to the client once connected (CONNECT's 200, SOCKS's success). */
  reply?: Buffer;
  /** Sent upstream first (a plain HTTP request's rewritten head, and what followed it). */
  forward: Buffer;
}

async function open(client: Socket<Side>, policy: object, rules: NetworkRules, step: Step, after: Uint8Array[]): Promise<void> {
  client.pause();
  const verdict = await admit(policy, rules, step.host, step.port);
  if (client.data.closed) return;
  if ("refused" in verdict) {
    if (step.socks) client.end(Buffer.from([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]));
    else httpAnswer(client, "403 Forbidden", refusalText(verdict.host, step.port, verdict.refused));
    return;
  }
  const upstream = await connectAndJoin(client, { hostname: verdict.address, port: step.port }, [step.forward, ...after], step.reply);
  if (upstream instanceof Error) {
    const why = (upstream as NodeJS.ErrnoException).code ?? upstream.message;
    if (step.socks) client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]));
    else httpAnswer(client, "502 Bad Gateway", `agent-shell's proxy could not connect to ${step.host}:${step.port}: ${why}\n`);
  }
}

function httpAnswer(client: Socket<Side>, status: string, body: string): void {
  client.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\nX-Agent-Shell: network\r\n\r\n${body}`);
}

function badRequest(client: Socket<Side>, socks: boolean, why: string): void {
  if (socks) client.end(Buffer.from([5, 1, 0, 1, 0, 0, 0, 0, 0, 0]));
  else httpAnswer(client, "400 Bad Request", `agent-shell's proxy did not understand the request: ${why}\n`);
}

/** An HTTP proxy request: CONNECT, or a request whose target is an absolute http:// URL. */
function httpRequest(buf: Buffer): Step | "more" | { error: string } {
  const end = buf.indexOf("\r\n\r\n");
  if (end < 0) return "more";
  const text = buf.subarray(0, end).toString("latin1");
  const lines = text.split("\r\n");
  const [method, target, version] = lines[0]!.split(" ");
  if (!method || !target || !version) return { error: "no request line" };
  const rest = buf.subarray(end + 4);
  if (method === "CONNECT") {
    const hp = splitHostPort(target, 443);
    if (!hp) return { error: `CONNECT needs host:port, got '${target}'` };
    return { ...hp, socks: false, reply: Buffer.from(`${version} 200 Connection Established\r\n\r\n`), forward: rest };
  }
  const url = /^http:\/\/([^/?#]+)([^#]*)/i.exec(target);
  if (!url) return { error: `a proxy request names an absolute http:// URL (https goes through CONNECT), got '${target}'` };
  const hp = splitHostPort(url[1]!.replace(/^[^@]*@/, ""), 80);
  if (!hp) return { error: `bad host in '${target}'` };
  // Origin form upstream; the proxy's own headers stay here.
  const headers = lines.slice(1).filter((l) => !/^proxy-(connection|authorization):/i.test(l));
  const rewritten = [`${method} ${url[2] || "/"} ${version}`, ...headers].join("\r\n") + "\r\n\r\n";
  return { ...hp, socks: false, forward: Buffer.concat([Buffer.from(rewritten, "latin1"), rest]) };
}

function splitHostPort(text: string, defaultPort: number): { host: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+)(?::(\d+))?$/.exec(text);
  if (!m) return null;
  const port = m[2] ? Number(m[2]) : defaultPort;
  return port >= 1 && port <= 65535 ? { host: m[1]!, port } : null;
}

/** SOCKS5 (RFC 1928), no authentication, CONNECT only; the greeting is answered as it comes. */
function socksRequest(buf: Buffer): Step | "more" | { error: string } {
  if (buf.length < 2 || buf.length < 2 + buf[1]!) return "more";
  const req = buf.subarray(2 + buf[1]!);
  if (req.length < 5) return "more";
  if (req[0] !== 5) return { error: "not SOCKS5" };
  if (req[1] !== 1) return { error: "only CONNECT is supported" };
  let host: string;
  let at: number;
  if (req[3] === 1) {
    at = 8;
    if (req.length < at + 2) return "more";
    host = [...req.subarray(4, 8)].join(".");
  } else if (req[3] === 3) {
    at = 5 + req[4]!;
    if (req.length < at + 2) return "more";
    host = req.subarray(5, at).toString("latin1");
  } else if (req[3] === 4) {
    at = 20;
    if (req.length < at + 2) return "more";
    const words: string[] = [];
    for (let i = 4; i < 20; i += 2) words.push(req.readUInt16BE(i).toString(16));
    host = words.join(":");
  } else return { error: "unknown address type" };
  return { host, port: req.readUInt16BE(at), socks: true, reply: Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]), forward: req.subarray(at + 2) };
}
