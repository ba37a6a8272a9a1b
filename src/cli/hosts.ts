import { loadConfig } from "../config/load.ts";
import type { HostConfig } from "../config/schema.ts";
import { isErrorResult } from "../errors.ts";
import { FarHosts } from "../host/far/far-hosts.ts";
import { describeWayIn, usesFarAgent, wayIn } from "../runtime/far/way-in.ts";
import { SshConnection, type SshTarget } from "../runtime/ssh/connection/connection.ts";
import { printJson, printOut, reportError } from "./report.ts";
import { maybeHelp, parseVerbArgs } from "./verb-args.ts";

export const HOSTS_HELP = `Usage: agent-shell hosts check [NAME...] [--json] [--config FILE]

For each configured host ([hosts.NAME] in the config; NAME: only those), how it is reached
(SSH, a container of podman or docker, an exec command), and then either the far side's
agent-shell version (copied there first if it was missing), its sandbox mode and level,
and the round-trip time of a call on the open pipe — or exactly what is wrong (engine not
installed, container missing or not running, architecture mismatch, copy failed).
Exit 0 if every host answered, 1 otherwise.

Options:
  --json             print {"hosts": [...]}
  --config FILE      configuration file

Examples:
  agent-shell hosts check
  agent-shell hosts check box --json
`;

/** Pings timed on the open pipe; the median is reported. */
const PINGS = 7;

export interface HostReport {
  name: string;
  way: string;
  ok: boolean;
  agent: boolean;
  version?: string;
  copied?: boolean;
  sandbox?: string;
  sandbox_level?: string;
  rtt_ms?: number;
  error?: string;
}

/** `agent-shell hosts check [NAME...]`. */
export async function hostsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs("hosts", argv, { config: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } });
  if (maybeHelp(values, HOSTS_HELP)) return 0;
  const [sub, ...names] = positionals;
  if (sub !== "check") return reportError(`hosts: expected 'hosts check [NAME...]' (see 'agent-shell hosts --help')`, 2);
  const { config } = loadConfig({ configFile: values.config as string | undefined });
  const known = Object.keys(config.hosts).sort();
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length) {
    return reportError(`hosts check: unknown host ${unknown.map((n) => `'${n}'`).join(", ")}; configured hosts: ${known.join(", ") || "none (add a [hosts.NAME] table to the config file)"}`, 2);
  }
  const chosen = names.length ? names : known;
  if (chosen.length === 0) return reportError("hosts check: no hosts are configured (add a [hosts.NAME] table to the config file)");
  const far = new FarHosts(config.hosts, config);
  try {
    const reports = await Promise.all(chosen.map((name) => checkHost(name, config.hosts[name]!, far, config.kill_grace_seconds)));
    if (values.json) printJson({ hosts: reports });
    else printOut(reports.map(line).join(""));
    return reports.every((r) => r.ok) ? 0 : 1;
  } finally {
    await far.close();
  }
}

async function checkHost(name: string, cfg: HostConfig, far: FarHosts, killGrace: number): Promise<HostReport> {
  const way = describeWayIn(wayIn(cfg));
  if (!usesFarAgent(cfg)) return checkShellRuntime(name, cfg, way, killGrace);
  const report: HostReport = { name, way, ok: false, agent: true };
  try {
    const link = far.link(name);
    await link.connect();
    const times: number[] = [];
    for (let i = 0; i < PINGS; i++) times.push(await link.ping());
    const probe = await link.call("bash", { command: "true" });
    if (isErrorResult(probe)) throw new Error(probe.error);
    return {
      ...report,
      ok: true,
      version: link.info?.version,
      copied: link.info?.copied,
      sandbox: probe.sandbox as string | undefined,
      sandbox_level: probe.sandbox_level as string | undefined,
      rtt_ms: round(median(times)),
    };
  } catch (e) {
    return { ...report, error: (e as Error).message };
  }
}

/** An SSH host without the far agent: §7's runtime; reachable or not, and the round trip of a tiny script. */
async function checkShellRuntime(name: string, cfg: HostConfig, way: string, killGrace: number): Promise<HostReport> {
  const report: HostReport = { name, way, ok: false, agent: false };
  const conn = new SshConnection(name, cfg as SshTarget, killGrace);
  try {
    await conn.run("true");
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await conn.run("true");
      times.push(performance.now() - t0);
    }
    return { ...report, ok: true, sandbox: "none (SSH shell runtime; set agent = true for the far-side agent)", rtt_ms: round(median(times)) };
  } catch (e) {
    return { ...report, error: (e as Error).message };
  } finally {
    await conn.close();
  }
}

function line(r: HostReport): string {
  if (!r.ok) return `${r.name}: ${r.way}: FAILED: ${r.error}\n`;
  if (!r.agent) return `${r.name}: ${r.way}: ok, ${r.sandbox}, round trip ${r.rtt_ms} ms\n`;
  const sandbox = r.sandbox_level ? `${r.sandbox} (${r.sandbox_level})` : (r.sandbox ?? "unknown");
  return `${r.name}: ${r.way}: ok, agent-shell ${r.version}${r.copied ? " (copied there now)" : ""}, sandbox ${sandbox}, round trip ${r.rtt_ms} ms\n`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
