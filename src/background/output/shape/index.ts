/**
 * What a model reads of a command's output (SPEC §15): terminal control rendered, repeats
 * folded, the lines that matter chosen under one budget for all streams, and every
 * omission one marker line naming the raw byte range it stands for. Pure: it reads bytes
 * through a ByteSource and returns text.
 */
import { decode } from "../decode.ts";
import { markAssertionDetails } from "./assertion-details.ts";
import { emitStream, type ShapedText } from "./emit.ts";
import { filteredItems } from "./filtered-items.ts";
import { foldRepeats } from "./fold.ts";
import { headTail, shareBudget } from "./head-tail.ts";
import type { ByteSource, Item } from "./items.ts";
import { baseKeep, cutCost, widenLongLines, withoutCut } from "./long-lines.ts";
import { selectLines } from "./select.ts";
import { MIN_WINDOW, streamItems } from "./stream-items.ts";
import { hasTerminalControl } from "./terminal-control.ts";

export type { ByteSource } from "./items.ts";
export { boundaryBefore, type ShapedText } from "./emit.ts";
export { renderLine, hasTerminalControl } from "./terminal-control.ts";

/** Lines split at each end of a stream, at least (a budget allows as many lines as it has bytes). */
const MIN_LINES = 1000;

/** A byte range of one stream to show, optionally only its lines matching `filter`. */
export interface ShapeRequest {
  source: ByteSource;
  start: number;
  end: number;
  filter?: RegExp;
  /** With `filter`: only the last N matching lines. */
  tailLines?: number;
}

export interface ShapeOptions {
  /** Bytes of output all the streams together may show, besides marker lines. */
  budget: number;
  /** The plain head and tail: no rendering, folding or selection. */
  raw?: boolean;
}

/** Shapes the streams of one result together, under one budget. */
export function shapeOutput(requests: ShapeRequest[], opts: ShapeOptions): ShapedText[] {
  const budget = opts.budget;
  const lengths = requests.map((r) => Math.max(0, r.end - r.start));
  const total = lengths.reduce((a, b) => a + b, 0);
  const unfiltered = requests.every((r) => !r.filter);
  if (unfiltered && total <= budget) {
    // Output that fits and holds no terminal control is returned byte for byte.
    const bytes = requests.map((r) => (r.end > r.start ? r.source.read(r.start, r.end) : new Uint8Array(0)));
    if (bytes.every((b) => b !== null) && (opts.raw || !bytes.some((b) => hasTerminalControl(b!)))) {
      return bytes.map((b) => ({ text: decode(b!), truncated: false }));
    }
  }
  if (opts.raw && unfiltered) {
    const shares = shareBudget(lengths, budget);
    return requests.map((r, i) => headTail(r.source, r.start, r.end, shares[i]!));
  }
  const window = Math.max(MIN_WINDOW, 2 * budget);
  let streams: Item[][] = requests.map((r) =>
    r.filter ? lastLines(filteredItems(r.source, r.start, r.end, r.filter, window), r.tailLines) : streamItems(r.source, r.start, r.end, window, Math.max(budget, MIN_LINES)),
  );
  const lines = streams.flat();
  const allLines = lines.every((it) => it.kind === "line");
  if (allLines && opts.raw) {
    // Filtered lines, plain: as they are when they fit.
    const raw = lines.reduce((n, it) => n + it.end - it.start, 0);
    if (raw <= budget) return streams.map((items) => ({ text: items.map((it) => (it.kind === "line" ? it.raw + (it.newline ? "\n" : "") : "")).join(""), truncated: false }));
  }
  if (!opts.raw) {
    if (allLines && lines.reduce((n, it) => n + (it.kind === "line" ? it.bytes : 0), 0) <= budget) {
      // Fits once rendered: every line, none cut or folded.
      return streams.map((items) => emitStream(items.map(withoutCut), items.map(() => true), 0));
    }
    const keep = baseKeep(budget);
    streams = streams.map((items) => foldRepeats(markAssertionDetails(items).map((it) => cutCost(it, keep))));
  } else {
    streams = streams.map((items) => items.map((it) => (it.kind === "line" ? { ...it, text: it.raw, bytes: it.end - it.start, reports: "plain" as const } : it)));
  }
  const kept = opts.raw ? selectEnds(streams, budget) : selectLines(streams, budget);
  if (!opts.raw) streams = widenLongLines(streams, kept, budget);
  return streams.map((items, i) => emitStream(items, kept[i]!, requests[i]!.source.total));
}

/** Plain selection for filtered raw views: lines from both ends only. */
function selectEnds(streams: Item[][], budget: number): boolean[][] {
  return selectLines(
    streams.map((items) => items.map((it) => (it.kind === "line" ? { ...it, reports: "plain" as const, long: undefined } : it))),
    budget,
  );
}

/** The items from the n-th line item from the end on. */
function lastLines(items: Item[], n: number | undefined): Item[] {
  if (n === undefined) return items;
  let seen = 0;
  for (let i = items.length - 1; i >= 0; i--) if (items[i]!.kind === "line" && ++seen > n) return items.slice(i + 1);
  return items;
}
