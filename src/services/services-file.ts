import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { z } from "zod";

/** The services file a directory declares, unless `-f FILE` names another. */
export const SERVICES_FILE_NAME = "agent-shell.toml";

/** A bad or missing services file; the message names the file, the service and the key. */
export class ServicesFileError extends Error {
  override name = "ConfigError"; // the CLI exits 2 on it, like any configuration mistake
}

const ServiceSchema = z
  .object({
    command: z.string().min(1, "must be a non-empty string"),
    cwd: z.string().min(1).optional(),
    env: z.record(z.string(), z.string()).optional(),
    depends_on: z.array(z.string().min(1)).optional(),
    ready_port: z.number().int().min(1).max(65535).optional(),
    ready_pattern: z.string().min(1).optional(),
    ready_url: z.string().regex(/^https?:\/\//i, "must be an http:// or https:// URL").optional(),
    ready_timeout_seconds: z.number().positive().optional(),
    restart_on: z.enum(["failure", "always"]).optional(),
    max_restarts: z.number().int().min(0).optional(),
    restart_delay_seconds: z.number().min(0).max(3600).optional(),
  })
  .strict();

export type ServiceDefinition = z.infer<typeof ServiceSchema> & {
  name: string;
  /** Absolute directory the service runs in (`cwd` resolved against the file's folder). */
  dir: string;
};

export interface ServicesFile {
  path: string;
  services: Map<string, ServiceDefinition>;
}

/** Where the services file is: `-f FILE` (relative to `cwd`), else agent-shell.toml in `cwd`. */
export function servicesFilePath(cwd: string, file?: string): string {
  return file === undefined ? join(cwd, SERVICES_FILE_NAME) : resolve(cwd, file);
}

/** Reads and validates a services file: `[services.NAME]` tables, nothing else. */
export function loadServicesFile(path: string): ServicesFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === "ENOENT";
    throw new ServicesFileError(
      missing
        ? `no services file at ${path}: create ${SERVICES_FILE_NAME} with a [services.NAME] table per service (command, depends_on, ready_port…), or give one with -f FILE`
        : `cannot read services file ${path}: ${(e as Error).message}`,
    );
  }
  let doc: Record<string, unknown>;
  try {
    doc = Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new ServicesFileError(`invalid TOML in ${path}: ${(e as Error).message.replace(/^TOML Parse error:\s*/, "")}`);
  }
  const unknown = Object.keys(doc).filter((k) => k !== "services");
  if (unknown.length) throw new ServicesFileError(`${path}: unknown top-level key '${unknown[0]}' (only [services.NAME] tables belong here)`);
  const tables = doc.services;
  if (tables === undefined || typeof tables !== "object" || tables === null || Object.keys(tables).length === 0) {
    throw new ServicesFileError(`${path} declares no services: add a [services.NAME] table with at least a command`);
  }
  const services = new Map<string, ServiceDefinition>();
  for (const [name, raw] of Object.entries(tables as Record<string, unknown>)) {
    const parsed = ServiceSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const key = issue.path.join(".");
      const what = issue.code === "unrecognized_keys" ? `unknown key ${issue.keys.map((k) => `'${k}'`).join(", ")}` : `${key}: ${issue.message}`;
      throw new ServicesFileError(`${path}: service '${name}': ${what}`);
    }
    const base = dirname(path);
    const dir = parsed.data.cwd === undefined ? base : isAbsolute(parsed.data.cwd) ? parsed.data.cwd : resolve(base, parsed.data.cwd);
    services.set(name, { ...parsed.data, name, dir });
  }
  return { path, services };
}
