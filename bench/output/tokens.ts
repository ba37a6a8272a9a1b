/**
 * o200k token counts for the output bench (bench only: gpt-tokenizer ships the o200k_base
 * ranks inside the package, so counting works offline and needs no WASM or native build).
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

/** Tokens a model pays for `text` (special-token strings in logs count as plain text). */
export function tokens(text: string): number {
  if (!text) return 0;
  return countTokens(text, { allowedSpecial: new Set(), disallowedSpecial: new Set() });
}
