import { z } from "zod";
import type { SandboxPolicy } from "../policy.ts";

/** The policy travels to the launcher in one argument: base64url of its JSON. */
export function encodePolicy(policy: SandboxPolicy): string {
  return Buffer.from(JSON.stringify(policy)).toString("base64url");
}

const policySchema = z.object({
  mode: z.enum(["workspace-write", "read-only"]),
  writableRoots: z.array(z.string()),
  workspaceRoots: z.array(z.string()),
  readOnlyUnderWritable: z.array(z.string()),
  denyRead: z.array(z.string()),
  network: z.boolean(),
  loopback: z.boolean(),
  allowUnixSockets: z.array(z.string()),
});

export function decodePolicy(text: string): SandboxPolicy {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw new Error("the sandbox policy argument is not readable");
  }
  const parsed = policySchema.safeParse(json);
  if (!parsed.success) throw new Error(`the sandbox policy argument is invalid: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}
