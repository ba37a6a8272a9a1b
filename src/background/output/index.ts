/** Output: bounded buffers, spools, and what a model reads of them (shape/). */
export { OutputStream, type StreamName } from "./stream.ts";
export { boundaryBefore, shapeOutput, type ByteSource, type ShapeRequest, type ShapedText } from "./shape/index.ts";
export { startOfLastLines } from "./last-lines.ts";
export { lastLineOf } from "./tail.ts";
export { decode } from "./decode.ts";
