import { answerKey, checkAddress, decide, isInternal, normalizeHost } from "./decide.ts";
import { callsUnder, type NetworkAnswer, reportDenied } from "./calls.ts";
import { isIpLiteral, type NetworkRules } from "./rules.ts";

/** What the proxy does with one connection: the address to connect to, or why not. */
export type Admission = { address: string; host: string } | { refused: string; host: string };

/** Names people allowed for the rest of this server's life (SPEC §21). */
const allowedForLife = new Set<string>();
/** Questions being asked, by policy and name: connections made meanwhile to the same name share the answer (one question, not one per connection). */
const asking = new WeakMap<object, Map<string, Promise<NetworkAnswer>>>();

/**
 * Whether a connection to `host:port` asked for from a sandbox of `policy` goes ahead: the
 * rules (decide.ts), a person when nobody decided yet, then the address the name resolves to.
 * Every decision is logged (host, port, command, time) on the server's stderr.
 */
export async function admit(policy: object, rules: NetworkRules, rawHost: string, port: number): Promise<Admission> {
  const host = normalizeHost(rawHost);
  const calls = callsUnder(policy);
  const commands = [...new Set(calls.map((c) => c.command))];
  const refuse = (reason: string): Admission => {
    reportDenied(calls, { host, port, reason });
    record("refused", host, port, commands, reason);
    return { refused: reason, host };
  };
  let decision = decide(host, port, rules, allowedForLife);
  if (decision.verdict === "deny") return refuse(decision.reason);
  let address: string;
  try {
    // Bun's resolver, not node:dns (a server's start loads no network module); IPv4 first, where many hosts have no IPv6 route.
    const found = isIpLiteral(host) ? [{ address: host, family: 0 }] : await Bun.dns.lookup(host);
    address = (found.find((a) => a.family === 4) ?? found[0]!).address;
  } catch (e) {
    return refuse(`the name does not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (decision.verdict === "ask") {
    const internal = isInternal(address) ? address : undefined;
    const asker = calls.find((c) => c.ask);
    if (!asker) return refuse("not in network_allow, and no person could be asked (the MCP client cannot elicit, or confirm_by = \"model\")");
    const pending = asking.get(policy) ?? new Map<string, Promise<NetworkAnswer>>();
    asking.set(policy, pending);
    const key = answerKey(host, port);
    let question = pending.get(key);
    if (!question) {
      record("asked", host, port, commands, internal ? `resolves to ${internal}` : "");
      question = asker.ask!({ host, port, commands, ...(internal ? { internal } : {}) }).catch(() => "no" as const);
      pending.set(key, question);
      void question.then((answer) => {
        pending.delete(key);
        record(`answered ${answer}`, host, port, commands, "");
      });
    }
    const answer = await question;
    if (answer === "no") return refuse("the person did not allow it (declined, or no answer in time)");
    if (answer === "always") allowedForLife.add(answerKey(host, port));
    // network_deny is read again: it wins over a person's yes.
    decision = decide(host, port, rules, new Set([answerKey(host, port)]));
    if (decision.verdict !== "allow") return refuse(decision.verdict === "deny" ? decision.reason : "not allowed");
  }
  if (decision.verdict !== "allow") return refuse("not allowed");
  const bad = checkAddress(address, decision.privateOk);
  if (bad) return refuse(bad);
  record("allowed", host, port, commands, `${address}; ${decision.why}`);
  return { address, host };
}

function record(what: string, host: string, port: number, commands: string[], detail: string): void {
  const command = commands.length ? commands.map((c) => JSON.stringify(c.length > 200 ? `${c.slice(0, 200)}…` : c)).join(", ") : "(no command running)";
  process.stderr.write(`agent-shell: network ${new Date().toISOString()} ${what} ${host}:${port} for ${command}${detail ? ` (${detail})` : ""}\n`);
}

/** What a refused command's proxy answer says: the host, why, and how to allow it. */
export function refusalText(host: string, port: number, reason: string): string {
  return `agent-shell refused the connection to ${host}:${port}: ${reason}. To allow it, add "${host}" to network_allow in agent-shell's config (or run with network = "on").\n`;
}

