/** UTF-8 with invalid bytes replaced; a BOM is kept, so text comes back byte-for-byte. */
const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

export const decode = (bytes: Uint8Array): string => decoder.decode(bytes);
