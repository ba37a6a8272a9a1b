import type { z } from "zod";

export type ErrorCode = "NOT_FOUND" | "ACCESS_DENIED" | "INVALID_ARGUMENT" | "IO_ERROR" | "TIMEOUT" | "BLOCKED";

export type ErrorResult = {
  error: string;
  error_code: ErrorCode;
  context: Record<string, unknown>;
};

export type ToolResult = Record<string, unknown>;

/** A failure that a tool reports as the SPEC's error shape instead of throwing at the caller. */
export class ToolError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly context: Record<string, unknown> = {},
  ) {
    super(message);
  }

  toResult(): ErrorResult {
    return { error: this.message, error_code: this.code, context: this.context };
  }
}

export function errorResult(code: ErrorCode, message: string, context: Record<string, unknown> = {}): ErrorResult {
  return { error: message, error_code: code, context };
}

export function isErrorResult(result: ToolResult): result is ToolResult & ErrorResult {
  return typeof result.error === "string" && typeof result.error_code === "string";
}

/** `Invalid arguments for bash: command: expected string, received undefined; …` */
export function invalidArguments(tool: string, error: z.ZodError, args: unknown): ErrorResult {
  const parts = error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.join(".") : "(arguments)";
    return `${field}: ${describeIssue(issue, args)}`;
  });
  return errorResult("INVALID_ARGUMENT", `Invalid arguments for ${tool}: ${parts.join("; ")}`, {
    tool,
    fields: error.issues.map((i) => i.path.join(".")),
  });
}

function describeIssue(issue: z.core.$ZodIssue, args: unknown): string {
  if (issue.code === "invalid_type") {
    const value = valueAt(args, issue.path);
    return `expected ${issue.expected}, received ${typeName(value)}`;
  }
  if (issue.code === "unrecognized_keys") return `unknown parameter${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `'${k}'`).join(", ")}`;
  return issue.message;
}

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let v: unknown = root;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function typeName(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && !Number.isInteger(value)) return "number";
  return typeof value;
}
