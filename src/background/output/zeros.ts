/**
 * Runs of NUL bytes (a flood from /dev/zero, a disk image, padding): the spool leaves them
 * as holes in its file instead of writing them, and passes over a stream's middle skip them
 * (they hold no line and no error). Checked by memcmp against a zero block (Buffer.equals,
 * ~40 GB/s here: 5 ms for 200 MB), which stops at the first other byte.
 */
const ZERO_BLOCK = Buffer.alloc(64 * 1024);

/** Whether every byte of `bytes` is 0 (false for an empty one). */
export function allZero(bytes: Uint8Array): boolean {
  if (bytes.byteLength === 0 || bytes[0] !== 0 || bytes[bytes.byteLength - 1] !== 0) return false;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at < view.byteLength; at += ZERO_BLOCK.byteLength) {
    const n = Math.min(ZERO_BLOCK.byteLength, view.byteLength - at);
    if (!view.subarray(at, at + n).equals(ZERO_BLOCK.subarray(0, n))) return false;
  }
  return true;
}
