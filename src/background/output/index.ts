/** Output: bounded buffers, spools, read views with head + tail truncation. */
export { OutputStream, type StreamName } from "./stream.ts";
export { renderRange, renderView, truncationMarker, type View, type ViewOptions } from "./truncate.ts";
export { lastLineOf } from "./tail.ts";
