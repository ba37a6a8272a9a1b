import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { dirname, join } from "node:path";
import { RECORD_BYTES, WRITE_ORDER_FILE } from "../background/output/write-order.ts";

export interface MergedLine {
  stream: "stdout" | "stderr";
  /** When the line's first byte was written (ms since the epoch). */
  at: number;
  /** The line with its newline, if it has one yet. */
  text: string;
}

/**
 * A task's stdout and stderr merged in the order written, line by line, from its log
 * files and its write-order index (see write-order.ts). `read()` returns the complete
 * lines added since the last call; `flush()` the unterminated ends once the task is over.
 */
export class MergedLog {
  private indexPos = 0;
  private ends = { stdout: 0, stderr: 0 };
  private pending = { stdout: { bytes: [] as Uint8Array[], at: 0 }, stderr: { bytes: [] as Uint8Array[], at: 0 } };
  private readonly decoder = new TextDecoder();

  private constructor(
    private readonly index: string,
    private readonly paths: { stdout: string; stderr: string },
  ) {}

  /** The merged log beside a stdout log file; null when the task has no index (a tty, a remote task). */
  static open(stdoutPath: string | undefined): MergedLog | null {
    if (!stdoutPath) return null;
    const dir = dirname(stdoutPath);
    const index = join(dir, WRITE_ORDER_FILE);
    if (!existsSync(index)) return null;
    return new MergedLog(index, { stdout: stdoutPath, stderr: join(dir, "stderr.log") });
  }

  read(): MergedLine[] {
    const out: MergedLine[] = [];
    const records = readFrom(this.index, this.indexPos);
    const view = new DataView(records.buffer, records.byteOffset, records.byteLength);
    const whole = records.byteLength - (records.byteLength % RECORD_BYTES);
    for (let off = 0; off < whole; off += RECORD_BYTES) {
      const stream = records[off] === 1 ? "stderr" : "stdout";
      const end = view.getFloat64(off + 8, true);
      const at = view.getFloat64(off + 16, true);
      const start = this.ends[stream];
      if (end <= start) continue;
      const bytes = readRange(this.paths[stream], start, end);
      this.ends[stream] = end;
      this.split(stream, bytes, at, out);
    }
    this.indexPos += whole;
    return out;
  }

  flush(): MergedLine[] {
    const out: MergedLine[] = [];
    for (const stream of ["stdout", "stderr"] as const) {
      const p = this.pending[stream];
      if (p.bytes.length) out.push({ stream, at: p.at, text: this.decoder.decode(concat(p.bytes)) });
      p.bytes = [];
    }
    return out.sort((a, b) => a.at - b.at);
  }

  private split(stream: "stdout" | "stderr", bytes: Uint8Array, at: number, out: MergedLine[]): void {
    const p = this.pending[stream];
    let from = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 10) continue;
      if (p.bytes.length === 0) p.at = at;
      p.bytes.push(bytes.subarray(from, i + 1));
      out.push({ stream, at: p.at, text: this.decoder.decode(concat(p.bytes)) });
      p.bytes = [];
      from = i + 1;
    }
    if (from < bytes.length) {
      if (p.bytes.length === 0) p.at = at;
      p.bytes.push(bytes.slice(from));
    }
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.byteLength;
  }
  return out;
}

function readFrom(path: string, start: number): Uint8Array {
  const fd = openSync(path, "r");
  try {
    const chunks: Uint8Array[] = [];
    let pos = start;
    for (;;) {
      const buf = new Uint8Array(64 * 1024);
      const n = readSync(fd, buf, 0, buf.byteLength, pos);
      if (n <= 0) break;
      chunks.push(buf.subarray(0, n));
      pos += n;
    }
    return concat(chunks.length ? chunks : [new Uint8Array(0)]);
  } finally {
    closeSync(fd);
  }
}

function readRange(path: string, start: number, end: number): Uint8Array {
  const fd = openSync(path, "r");
  try {
    const out = new Uint8Array(end - start);
    let got = 0;
    while (got < out.byteLength) {
      const n = readSync(fd, out, got, out.byteLength - got, start + got);
      if (n <= 0) break;
      got += n;
    }
    return out.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}
