/** Terminal: rendering a tty task's output, its named keys, and prompt detection. */
export { TerminalScreen } from "./screen.ts";
export { TerminalText } from "./text.ts";
export { keyBytes, KNOWN_KEYS_HELP } from "./keys.ts";
export { detectPrompt } from "./prompt-detect.ts";
