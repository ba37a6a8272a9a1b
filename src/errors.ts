/**
 * The one error type. Every layer throws a CodedError (or lets a plain Error escape);
 * ToolHost.call alone turns it into the SPEC §2 result `{error, error_code, context}`.
 */
export type ErrorCode = "NOT_FOUND" | "ACCESS_DENIED" | "INVALID_ARGUMENT" | "IO_ERROR" | "TIMEOUT" | "BLOCKED";

export type ToolResult = Record<string, unknown>;

export type ErrorResult = {
  error: string;
  error_code: ErrorCode;
  context: Record<string, unknown>;
};

export class CodedError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly context: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** The SPEC §2 result shape of this failure. */
  toResult(): ErrorResult {
    return { error: this.message, error_code: this.code, context: this.context };
  }

  /** The same failure with more context (the caller knows what it was doing). */
  withContext(context: Record<string, unknown>): CodedError {
    return new CodedError(this.code, this.message, { ...context, ...this.context });
  }
}

/** `Invalid arguments for bash: cols: only with tty: true` — the text written once. */
export function invalidArgument(tool: string, field: string, message: string, context: Record<string, unknown> = {}): CodedError {
  return invalidArguments(tool, [[field, message]], context);
}

/** Several problems in one message: `Invalid arguments for bash: cols: …; rows: …`. */
export function invalidArguments(tool: string, problems: Array<[field: string, message: string]>, context: Record<string, unknown> = {}): CodedError {
  return new CodedError("INVALID_ARGUMENT", `Invalid arguments for ${tool}: ${problems.map(([f, m]) => `${f}: ${m}`).join("; ")}`, context);
}

/**
 * A failure from a lower layer as a tool reports it: a coded error keeps its code and
 * gains `context`; anything else is an IO_ERROR whose message starts with `prefix`.
 */
export function asCodedError(e: unknown, prefix: string, context: Record<string, unknown>): CodedError {
  if (e instanceof CodedError) return e.withContext(context);
  return new CodedError("IO_ERROR", `${prefix}: ${(e as Error)?.message ?? String(e)}`, context);
}

export function isErrorResult(result: ToolResult): result is ToolResult & ErrorResult {
  return typeof result.error === "string" && typeof result.error_code === "string";
}
