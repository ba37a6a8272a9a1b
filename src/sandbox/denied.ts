import { isAbsolute, resolve } from "node:path";
import { under } from "./roots.ts";

/** Where a failed sandboxed command hit the sandbox, and how to proceed. */
export interface SandboxDenied {
  paths: string[];
  hint: string;
}

export interface DeniedInput {
  output: string;
  cwd: string;
  writableRoots: string[];
  network: boolean;
}

const FS_ERROR = /Permission denied|Read-only file system|EACCES|EROFS|\[Errno (13|30)\]/i;
const NET_ERROR = /Network is unreachable|ENETUNREACH|Temporary failure in name resolution|Could not resolve host|EAI_AGAIN|getaddrinfo|Name or service not known|No address associated with hostname/i;
/** Quoted paths ('…', ‘…’, "…", `…'), or `tool: /path: error` / `bash: path: error`. */
const QUOTED = /['‘"`]([^'’"`\n]+)['’"]/g;
const COLON_PATH = /^(?:[^\s:]+: )*(?:line \d+: )?([^:\n]+): (?:Permission denied|Read-only file system)/;
const MAX_PATHS = 10;

/**
 * Pure: reads a failed command's output for permission errors on paths outside the
 * writable roots (and network errors when the network is off). Null when the failure
 * does not look like the sandbox's doing.
 */
export function detectSandboxDenied(input: DeniedInput): SandboxDenied | null {
  const paths: string[] = [];
  let network = false;
  const add = (raw: string) => {
    const candidate = raw.trim();
    if (!candidate || /\s{2,}/.test(candidate)) return;
    if (!candidate.startsWith("/") && !candidate.startsWith(".") && !candidate.includes("/")) {
      if (!/^[\w.-]+$/.test(candidate)) return;
    }
    const abs = isAbsolute(candidate) ? resolve(candidate) : resolve(input.cwd, candidate);
    if (input.writableRoots.some((root) => under(abs, root))) return;
    if (!paths.includes(abs) && paths.length < MAX_PATHS) paths.push(abs);
  };
  for (const line of input.output.split("\n")) {
    if (FS_ERROR.test(line)) {
      const quoted = [...line.matchAll(QUOTED)].map((m) => m[1]!);
      if (quoted.length) for (const q of quoted) add(q);
      else {
        const colon = COLON_PATH.exec(line);
        if (colon) add(colon[1]!);
      }
    } else if (!input.network && NET_ERROR.test(line)) {
      network = true;
    }
  }
  if (!paths.length && !network) return null;
  const hints: string[] = [];
  if (paths.length) {
    hints.push(
      "The sandbox allows writes only under the writable roots. To allow a path, add it to sandbox_writable in the config file " +
        '(or to allowed_paths); or retry the call with sandbox: "off", which asks for confirmation before running outside the sandbox.',
    );
  }
  if (network) hints.push('The network is off in this sandbox (sandbox_network = false); set sandbox_network = true in the config, or retry with sandbox: "off" (asks for confirmation).');
  return { paths, hint: hints.join(" ") };
}
