import type { Socket, SocketHandler } from "bun";

/**
 * Two Bun sockets joined both ways, with back-pressure: what one side cannot take yet waits
 * in its backlog and the other side is paused until it drains. Bun's own sockets, not
 * node:net streams: a connection's set-up through the proxy costs a third as much (measured,
 * docs/sandbox.md). Either side's end ends the other once its backlog is written.
 */
export interface Side {
  peer: Socket<Side> | null;
  /** Bytes this socket could not take yet, in order. */
  backlog: Uint8Array[];
  /** Set while the socket is not joined yet: what it sends goes here instead (e.g. a request head). */
  onData: ((socket: Socket<Side>, chunk: Uint8Array) => void) | null;
  endAfterBacklog: boolean;
  closed: boolean;
}

export function newSide(onData: Side["onData"] = null): Side {
  return { peer: null, backlog: [], onData, endAfterBacklog: false, closed: false };
}

/** Writes `bytes` to `to` (after its backlog); what does not fit waits, and `from` pauses until it drains. */
export function send(to: Socket<Side>, bytes: Uint8Array, from: Socket<Side> | null = null): void {
  if (bytes.length === 0) return;
  if (to.data.backlog.length === 0) {
    const n = to.write(bytes);
    if (n >= bytes.length) return;
    bytes = bytes.subarray(Math.max(0, n));
  }
  // Bun may reuse the buffer it handed to `data`: what waits is copied.
  to.data.backlog.push(new Uint8Array(bytes));
  from?.pause();
}

/** Joins `a` and `b`: from now on each one's bytes go to the other. */
export function join(a: Socket<Side>, b: Socket<Side>): void {
  a.data.peer = b;
  b.data.peer = a;
  a.data.onData = null;
  b.data.onData = null;
  if (a.data.closed) endSide(b);
  if (b.data.closed) endSide(a);
}

function endSide(s: Socket<Side>): void {
  if (s.data.closed) return;
  if (s.data.backlog.length) s.data.endAfterBacklog = true;
  else s.end();
}

/** The handlers every joined socket uses (listening and connecting sides alike). */
export const joinHandlers: SocketHandler<Side> = {
  data(s, chunk) {
    if (s.data.onData) s.data.onData(s, chunk);
    else if (s.data.peer) send(s.data.peer, chunk, s);
  },
  drain(s) {
    const q = s.data.backlog;
    while (q.length) {
      const chunk = q[0]!;
      const n = s.write(chunk);
      if (n < chunk.length) {
        q[0] = chunk.subarray(Math.max(0, n));
        return;
      }
      q.shift();
    }
    if (s.data.endAfterBacklog) s.end();
    s.data.peer?.resume();
  },
  close(s) {
    s.data.closed = true;
    if (s.data.peer) endSide(s.data.peer);
  },
  error(s) {
    s.data.closed = true;
    if (s.data.peer) endSide(s.data.peer);
  },
  connectError(s) {
    s.data.closed = true;
  },
};

/**
 * Connects to `target` and joins it with `client` (paused meanwhile): `first` goes ahead to
 * the target, then what the client sent meanwhile; `reply` is said to the client once connected.
 */
export async function connectAndJoin(client: Socket<Side>, target: { hostname: string; port: number } | { unix: string }, first: Uint8Array[] = [], reply?: Uint8Array): Promise<Socket<Side> | Error> {
  client.pause();
  const early: Uint8Array[] = [];
  client.data.onData = (_s, chunk) => void early.push(new Uint8Array(chunk));
  try {
    const upstream = await Bun.connect<Side>({ ...target, socket: joinHandlers, data: newSide() } as never);
    if (reply) send(client, reply);
    for (const bytes of [...first, ...early]) send(upstream, bytes, client);
    join(client, upstream);
    client.resume();
    return upstream;
  } catch (e) {
    return e as Error;
  }
}
