import type { z } from "zod";
import { type CodedError, invalidArguments } from "../errors.ts";

/** `Invalid arguments for bash: command: expected string, received undefined; …` from zod's issues. */
export function fromZodError(tool: string, error: z.ZodError, args: unknown): CodedError {
  const problems = error.issues.map((issue): [string, string] => [issue.path.length ? issue.path.join(".") : "(arguments)", describeIssue(issue, args)]);
  return invalidArguments(tool, problems, { tool, fields: error.issues.map((i) => i.path.join(".")) });
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
