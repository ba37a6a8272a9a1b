import { z } from "zod";

/** One `[hosts.NAME]` table: an SSH host the `host` parameter can name. */
export const HostSchema = z
  .object({
    host: z.string().min(1),
    port: z.number().int().min(1).max(65535).default(22),
    user: z.string().min(1).optional(),
    identity_file: z.string().min(1).optional(),
    known_hosts: z.string().min(1).optional(),
    strict_host_key_checking: z.enum(["yes", "accept-new"]).default("yes"),
    allowed_paths: z.array(z.string()).optional(),
  })
  .strict();

export type HostConfig = z.infer<typeof HostSchema>;

/** Every configuration key with its default. Keys are snake_case everywhere (file, env, library). */
export const ConfigSchema = z
  .object({
    timeout_seconds: z.number().int().min(1).default(120),
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
    sandbox_network: z.boolean().default(true),
    sandbox_network_loopback: z.boolean().default(true),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;
