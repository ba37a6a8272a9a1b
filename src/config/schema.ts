import { z } from "zod";
import { RuleSchema } from "../safety/rules/rules.ts";
import { parseEntry } from "../sandbox/network/rules.ts";

/** A network_allow / network_deny entry: `host`, `*.domain`, an IP address, optionally `:port`. */
const NameEntrySchema = z.string().superRefine((text, issue) => {
  const e = parseEntry(text);
  if ("error" in e) issue.addIssue({ code: "custom", message: e.error });
});

/**
 * One `[hosts.NAME]` table (SPEC §7, §16) with exactly one way in: an SSH host (`host`,
 * `port`, …), a container (`container`, `engine`), or any pipe command (`exec`).
 * Container and exec hosts, and SSH hosts with `agent = true`, run agent-shell on the far side.
 */
export const HostSchema = z
  .object({
    host: z.string().min(1).optional(),
    port: z.number().int().min(1).max(65535).default(22),
    user: z.string().min(1).optional(),
    identity_file: z.string().min(1).optional(),
    known_hosts: z.string().min(1).optional(),
    strict_host_key_checking: z.enum(["yes", "accept-new"]).default("yes"),
    allowed_paths: z.array(z.string()).optional(),
    // §16: the far-side agent.
    container: z.string().min(1).optional(),
    engine: z.enum(["podman", "docker"]).optional(),
    exec: z.array(z.string().min(1)).min(1).optional(),
    agent: z.boolean().optional(),
    agent_path: z.string().min(1).optional(),
    sandbox: z.enum(["workspace-write", "read-only", "off"]).optional(),
  })
  .strict()
  .superRefine((h, issue) => {
    const ways = (["host", "container", "exec"] as const).filter((k) => h[k] !== undefined);
    if (ways.length !== 1) {
      issue.addIssue({
        code: "custom",
        path: ways.length ? [ways[1]!] : ["host"],
        message: ways.length
          ? `give one way in, not ${ways.join(" and ")}`
          : 'give one way in: host = "ssh.example.com", container = "NAME" or exec = ["kubectl", "exec", "-i", "POD", "--"]',
      });
    }
    if (h.engine !== undefined && h.container === undefined) issue.addIssue({ code: "custom", path: ["engine"], message: "engine applies only with container" });
    if (h.agent === false && h.host === undefined) {
      issue.addIssue({ code: "custom", path: ["agent"], message: "container and exec hosts always run agent-shell on the far side" });
    }
  });

export type HostConfig = z.infer<typeof HostSchema>;

/** Every configuration key with its default. Keys are snake_case everywhere (file, env, library). */
export const ConfigSchema = z
  .object({
    timeout_seconds: z.number().int().min(1).default(120),
    /** What a foreground command leaves running when it exits (SPEC §25): kept as a background task, or ended. */
    foreground_leftovers: z.enum(["adopt", "kill"]).default("adopt"),
    task_timeout_seconds: z.number().int().min(1).default(1800),
    /** What a model reads (SPEC §15): output budget of a result (stdout + stderr together), shaping, agent-aware children. */
    max_output_bytes: z.number().int().min(1000).max(2_500_000).default(8000),
    output_shaping: z.boolean().default(true),
    agent_env: z.boolean().default(true),
    background_buffer_bytes: z.number().int().min(1000).max(100_000_000).default(1_000_000),
    kill_grace_seconds: z.number().min(0).max(60).default(2),
    task_ttl_seconds: z.number().min(0).default(1800),
    max_finished_tasks: z.number().int().min(0).default(500),
    max_log_bytes: z.number().int().min(0).default(1024 * 1024 * 1024),
    /** All task logs together (SPEC §26); unset: 10 GiB or a tenth of the free space at start, whichever is smaller. */
    max_state_bytes: z.number().int().min(0).optional(),
    max_notifications: z.number().int().min(0).default(100),
    allowed_paths: z.array(z.string()).default([]),
    agent_command: z.array(z.string()).min(1).optional(),
    state_dir: z.string().min(1).optional(),
    /** The CLI daemon exits after this many seconds with no client and no running task. */
    daemon_idle_seconds: z.number().min(0).default(900),
    hosts: z.record(z.string(), HostSchema).default({}),
    /** Containment of every local command (SPEC §11). Unset: workspace-write, falling back to off loudly. */
    sandbox: z.enum(["workspace-write", "read-only", "off"]).optional(),
    sandbox_writable: z.array(z.string()).default([]),
    sandbox_deny_read: z.array(z.string()).default([]),
    /** Older spelling of `network` (true: "on", false: "off"); `network` wins when both are set. */
    sandbox_network: z.boolean().optional(),
    /** What sandboxed commands reach (SPEC §21): allowed names through agent-shell's proxy (default), the shared network, or nothing. */
    network: z.enum(["allowlist", "on", "off"]).optional(),
    network_allow: z.array(NameEntrySchema).default([]),
    /** The built-in registries and code hosts are allowed too. */
    network_allow_defaults: z.boolean().default(true),
    network_deny: z.array(NameEntrySchema).default([]),
    /** Ports a sandboxed command listens on are published on the host's loopback. */
    network_publish: z.boolean().default(true),
    /** Host loopback ports reachable inside the sandbox on the same port. */
    network_forward: z.array(z.number().int().min(1).max(65535)).default([]),
    sandbox_network_loopback: z.boolean().default(true),
    /** Unix sockets outside the sandbox that commands may connect to (SPEC §20); none by default. */
    sandbox_allow_unix_sockets: z.array(z.string()).default([]),
    /** Secret-looking variables of the server's environment that commands inherit anyway (SPEC §20). */
    env_passthrough: z.array(z.string()).default([]),
    /** Processes one task may have at once (its cgroup's pids.max, where there is one). */
    max_processes: z.number().int().min(16).max(4_194_304).default(2048),
    /** Who confirms a call that needs it (SPEC §19): the MCP client's person when it can elicit (auto), only a person, or the model. */
    confirm_by: z.enum(["auto", "person", "model"]).default("auto"),
    /** How long a person has to answer a confirmation question; unanswered runs nothing. */
    confirm_timeout_seconds: z.number().min(1).max(86_400).default(120),
    /** Local commands start from the user's login shell, captured once (SPEC §23). */
    shell_snapshot: z.boolean().default(true),
    /** The MCP client's own tool timeout: a foreground call about to outlive it moves to the background (SPEC §23). */
    client_timeout_seconds: z.number().min(1).max(86_400).optional(),
    /** The user's rules (SPEC §22): `[[rules]]` tables deciding allow, ask or deny per command. */
    rules: z.array(RuleSchema).default([]),
    /** The record of every call, `<state>/audit.jsonl` (SPEC §22). */
    audit: z.boolean().default(true),
    /** The audit file is rotated at this size; 5 files are kept. */
    audit_max_bytes: z.number().int().min(1000).default(50 * 1024 * 1024),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;

