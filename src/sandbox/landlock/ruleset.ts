import { existsSync, statSync } from "node:fs";
import { handledFs, NET, SCOPE } from "./abi.ts";
import { landlockRules } from "./rules.ts";
import { landlockAbi } from "./syscalls.ts";
import type { SandboxPolicy } from "../policy.ts";
import { hostProxyPort } from "../network/host-proxy.ts";

/**
 * A policy's Landlock ruleset as the spawn helper reads it (runtime/spawn-helper/): NUL-separated,
 * the ABI, the handled filesystem, network and scope bits, then pairs of rights and path (or
 * `tcp:PORT`, a port commands may connect to). The
 * helper applies it to the command between fork and exec.
 *
 * Made once per policy and kept while what it was made from holds: which hidden paths exist
 * (one made since must be left out of the readable tree) and the directories it lists (those
 * on the way to a hidden path, whose every entry gets a rule of its own).
 */
export function landlockRuleset(policy: SandboxPolicy): string {
  const known = cache.get(policy);
  const hidden = policy.denyRead.map((p) => (existsSync(p) ? "1" : "0")).join("");
  if (known && known.hidden === hidden && known.listed.every(([dir, mtime]) => mtimeOf(dir) === mtime)) return known.text;
  const abi = landlockAbi();
  if (typeof abi !== "number") throw abi;
  const listed: string[] = [];
  const rules = landlockRules(policy, handledFs(abi), listed);
  // Landlock cannot tell loopback from other addresses: with the network cut, all TCP is. With
  // the allowlist (SPEC §21), connecting is allowed to the proxy's port and the forwarded ones,
  // whatever the address; binding stays free (a dev server listens on the host's loopback).
  const rules_ = policy.allowlist;
  const net = abi < 4 || policy.network ? 0n : rules_ ? NET.CONNECT_TCP : NET.BIND_TCP | NET.CONNECT_TCP;
  const ports = abi >= 4 && rules_ ? [hostProxyPort(policy, rules_), ...rules_.forward] : [];
  const scoped = abi >= 6 ? SCOPE.SIGNAL | SCOPE.ABSTRACT_UNIX_SOCKET : 0n;
  const fields = [String(abi), String(handledFs(abi)), String(net), String(scoped)];
  for (const rule of rules) fields.push(String(rule.rights), rule.path);
  for (const port of ports) fields.push(String(NET.CONNECT_TCP), `tcp:${port}`);
  const text = fields.map((f) => `${f}\0`).join("");
  cache.set(policy, { text, hidden, listed: listed.map((dir) => [dir, mtimeOf(dir)]) });
  return text;
}

const cache = new WeakMap<SandboxPolicy, { text: string; hidden: string; listed: [string, number][] }>();

function mtimeOf(dir: string): number {
  try {
    return statSync(dir).mtimeMs;
  } catch {
    return -1;
  }
}
