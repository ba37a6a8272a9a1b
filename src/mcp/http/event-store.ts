import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * One HTTP session's SSE events, kept so a client whose stream broke can resume it with
 * `Last-Event-ID` (the SDK replays what follows). One store per session, so an event id
 * can never replay another session's stream. Bounded: past `maxBytes` of stored messages
 * the oldest are dropped (a resume from before them replays what is left).
 */
export class SessionEventStore implements EventStore {
  private readonly events: Array<{ id: string; streamId: string; message: JSONRPCMessage; bytes: number }> = [];
  private bytes = 0;
  private next = 0;

  constructor(private readonly maxBytes = 32 * 1024 * 1024) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    // The stream id is part of the event id: a resume names its stream even after eviction.
    const id = `${streamId}_${++this.next}`;
    const bytes = JSON.stringify(message).length;
    this.events.push({ id, streamId, message, bytes });
    this.bytes += bytes;
    while (this.bytes > this.maxBytes && this.events.length > 1) this.bytes -= this.events.shift()!.bytes;
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const cut = eventId.lastIndexOf("_");
    return cut > 0 && /^\d+$/.test(eventId.slice(cut + 1)) ? eventId.slice(0, cut) : undefined;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const streamId = (await this.getStreamIdForEventId(lastEventId)) ?? "";
    const after = Number(lastEventId.slice(lastEventId.lastIndexOf("_") + 1));
    for (const e of this.events) {
      if (e.streamId === streamId && Number(e.id.slice(e.id.lastIndexOf("_") + 1)) > after) await send(e.id, e.message);
    }
    return streamId;
  }
}
