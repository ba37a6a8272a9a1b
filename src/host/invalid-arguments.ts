import type { z } from "zod";
import { type CodedError, invalidArguments } from "../errors.ts";

/** `Invalid arguments for bash: command: expected string, received undefined; …` from zod's issues. */
export function fromZodError(tool: string, error: z.ZodError, args: unknown, known: string[] = []): CodedError {
  const problems = error.issues.flatMap((issue): [string, string][] => {
    // An unknown parameter is named on its own, with the one meant when one is close (SPEC §15).
    if (issue.code === "unrecognized_keys") return issue.keys.map((key) => [key, unknownParameter(key, known)]);
    return [[issue.path.length ? issue.path.join(".") : "(arguments)", describeIssue(issue, args)]];
  });
  return invalidArguments(tool, problems, { tool, fields: problems.map(([field]) => field) });
}

function describeIssue(issue: z.core.$ZodIssue, args: unknown): string {
  if (issue.code === "invalid_type") {
    const value = valueAt(args, issue.path);
    return `expected ${issue.expected}, received ${typeName(value)}`;
  }
  return issue.message;
}

function unknownParameter(key: string, known: string[]): string {
  const meant = closest(key, known);
  return `unknown parameter${meant ? ` (did you mean '${meant}'?)` : known.length ? `; known: ${known.join(", ")}` : ""}`;
}

/** Names other shells' tools use for these parameters. */
const SYNONYMS: Record<string, string> = {
  cwd: "working_directory",
  workdir: "working_directory",
  dir: "working_directory",
  directory: "working_directory",
  cmd: "command",
  timeout: "timeout_seconds",
  timeout_ms: "timeout_seconds",
  background: "run_in_background",
  environment: "env",
  id: "task_id",
  shell_id: "task_id",
  bash_id: "task_id",
  input: "chars",
};

/** The known name closest to `key`: a usual synonym, one containing it or contained in it, else within a few edits. */
function closest(key: string, known: string[]): string | null {
  const k = key.toLowerCase();
  const synonym = SYNONYMS[k];
  if (synonym && known.includes(synonym)) return synonym;
  const containing = known.filter((n) => n.includes(k) || k.includes(n));
  if (containing.length) return containing.sort((a, b) => Math.abs(a.length - k.length) - Math.abs(b.length - k.length))[0]!;
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(k.length / 3)) + 1;
  for (const name of known) {
    const d = editDistance(k, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
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
