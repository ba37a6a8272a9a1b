import type { OutputStream } from "./stream.ts";

/** Read chunks are garbage once appended: a collection every so many bytes read (all tasks together) keeps a flood's peak memory near what the buffers hold. */
const COLLECT_EVERY_BYTES = 64 * 1024 * 1024;
let readSinceCollect = 0;

/**
 * Drains a child's byte stream into an OutputStream, continuously, so the child never
 * blocks on a full pipe whether or not anyone reads. `abandon()` stops waiting for EOF
 * (something that escaped the process group may hold the pipe open forever).
 */
export class Collector {
  readonly done: Promise<void>;
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private finished = false;

  constructor(source: ReadableStream<Uint8Array>, private sink: OutputStream) {
    this.reader = source.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    this.done = this.run();
  }

  get eof(): boolean {
    return this.finished;
  }

  private async run(): Promise<void> {
    try {
      for (;;) {
        const { value, done } = await this.reader.read();
        if (done) break;
        if (value.byteLength > 0) this.sink.append(value);
        if ((readSinceCollect += value.byteLength) >= COLLECT_EVERY_BYTES) {
          readSinceCollect = 0;
          Bun.gc(false);
        }
      }
    } catch {
      /* a read error ends the stream like EOF */
    } finally {
      this.finished = true;
      this.sink.spool?.end();
    }
  }

  abandon(): void {
    if (!this.finished) this.reader.cancel().catch(() => {});
  }
}
