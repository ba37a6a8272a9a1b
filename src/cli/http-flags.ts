import type { OptionSpecs } from "./verb-args.ts";

/** The flags only `mcp --http` takes. */
export const HTTP_FLAGS = {
  http: { type: "string" },
  "token-file": { type: "string" },
  "allow-origin": { type: "string", multiple: true },
  "allow-host": { type: "string", multiple: true },
  "session-timeout": { type: "string" },
} as const satisfies OptionSpecs;

export interface HttpFlags {
  http?: string;
  "token-file"?: string;
  "allow-origin"?: string[];
  "allow-host"?: string[];
  "session-timeout"?: string;
}
