/**
 * Zod's compiled fast path costs ~1 ms per schema at its first parse (every MCP message
 * type, every tool's first call) to save microseconds per parse after: not worth it in a
 * server that answers a few calls a second, nor in a one-shot CLI. main.ts imports this
 * before any schema is built.
 */
import { z } from "zod";

z.config({ jitless: true });
