import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Host key verification against an OpenSSH known_hosts file: plain and hashed (`|1|…`)
 * host patterns, `[host]:port` for non-default ports, and `accept-new` recording an unknown
 * key the way OpenSSH does. Markers (`@cert-authority`, `@revoked`) and wildcard patterns
 * are not supported: such lines never match.
 */

export type HostKeyVerdict = { ok: true; recorded?: boolean } | { ok: false; reason: "unknown" | "changed" };

/** `SHA256:…` as `ssh-keygen -lf` and OpenSSH's warnings print it. */
export function fingerprint(keyBlob: Buffer): string {
  return "SHA256:" + new Bun.CryptoHasher("sha256").update(keyBlob).digest("base64").replace(/=+$/, "");
}

/** The key type named inside an SSH public key blob (`ssh-ed25519`, `ssh-rsa`, …). */
export function keyType(keyBlob: Buffer): string {
  const len = keyBlob.readUInt32BE(0);
  return keyBlob.subarray(4, 4 + len).toString("latin1");
}

/** The name known_hosts uses for a host: `host`, or `[host]:port` when the port is not 22. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function patternMatches(pattern: string, name: string): boolean {
  if (pattern.startsWith("|1|")) {
    const [, , salt, hash] = pattern.split("|");
    if (!salt || !hash) return false;
    const mac = new Bun.CryptoHasher("sha1", Buffer.from(salt, "base64")).update(name).digest("base64");
    return mac === hash;
  }
  return pattern.split(",").some((p) => p === name);
}

export function verifyHostKey(
  file: string,
  host: string,
  port: number,
  keyBlob: Buffer,
  mode: "yes" | "accept-new",
): HostKeyVerdict {
  const name = knownHostsName(host, port);
  const type = keyType(keyBlob);
  const encoded = keyBlob.toString("base64");
  let sawOtherKeyOfType = false;
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    /* a missing file knows no hosts */
  }
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith("@")) continue;
    const [patterns, lineType, key] = line.split(/\s+/);
    if (!patterns || !lineType || !key || !patternMatches(patterns, name)) continue;
    if (lineType === type && key === encoded) return { ok: true };
    if (lineType === type) sawOtherKeyOfType = true;
  }
  if (sawOtherKeyOfType) return { ok: false, reason: "changed" };
  if (mode === "yes") return { ok: false, reason: "unknown" };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const needsNewline = text.length > 0 && !text.endsWith("\n");
  appendFileSync(file, `${needsNewline ? "\n" : ""}${name} ${type} ${encoded}\n`, { mode: 0o600 });
  return { ok: true, recorded: true };
}
