import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { daemonVerb, privilegedWord } from "./inside-words.ts";
import { under } from "../../sandbox/roots.ts";

/** What the sandbox refused (SPEC §25): each kind has its own way forward. */
export const DENIED_KINDS = ["write", "hidden", "socket", "privilege", "daemon", "network", "pid"] as const;
export type DeniedKind = (typeof DENIED_KINDS)[number];

/** Where a failed sandboxed command hit the sandbox, and how to proceed. */
export interface SandboxDenied {
  kind: DeniedKind;
  paths: string[];
  hint: string;
}

export const DENIED_HINTS: Readonly<Record<DeniedKind, string>> = {
  write:
    "The sandbox allows writes only under the writable roots (the allowed paths, the temp dir, tool caches). To allow a path, add it to " +
    'sandbox_writable in the config file (or to allowed_paths); or retry the call with sandbox: "off", which asks for confirmation before running outside the sandbox.',
  hidden:
    "This path is hidden from sandboxed commands (a secret such as keys or tokens, or agent-shell's own state): no sandbox setting makes it " +
    'readable inside, only sandbox: "off" (which asks for confirmation). Do without it, or ask the user to run what needs it.',
  socket:
    "Sandboxed commands cannot connect to unix sockets of programs outside (tmux, Docker, ssh-agent, D-Bus…). To open one, add its path to " +
    'sandbox_allow_unix_sockets in the config file; or retry with sandbox: "off" (asks for confirmation).',
  privilege:
    "Nothing gains privileges inside the sandbox: sudo, su and setuid programs cannot work there. Ask the user to run this command " +
    "themselves, in their own terminal.",
  daemon:
    "agent-shell's daemon cannot be started or reached from inside a sandboxed command (agent-shell up, start, call…). Start a service " +
    'declared in agent-shell.toml with the bash tool instead, bash {service: "NAME"}, or run the command itself with bash (run_in_background: true for one that keeps running).',
  network: 'The network is off in this sandbox (sandbox_network = false); set sandbox_network = true in the config, or retry with sandbox: "off" (asks for confirmation).',
  pid:
    "Process ids inside the sandbox are its own (it has a pid namespace): a host pid does not exist there. Use the pid a command inside printed " +
    "(e.g. $!, or a background result's sandbox_pid), or end a task with kill_shell {task_id}.",
};

export interface DeniedInput {
  output: string;
  /** The command line that ran (privilege and daemon commands are known by their words). */
  command?: string;
  cwd: string;
  writableRoots: string[];
  /** Paths hidden from commands (secrets, agent-shell's state). */
  hidden?: string[];
  network: boolean;
  /** The sandbox level: only namespaces have pids of their own. */
  level?: string;
}

/** Errors a write outside the roots shows, whatever the tool: EROFS, EACCES, EBUSY (a mount), ENOENT when a read-only parent was created in. */
const FS_ERROR = /Permission denied|Read-only file system|Device or resource busy|EACCES|EROFS|EBUSY|\[Errno (13|16|30)\]/i;
const ENOENT_CREATING = /(?:ENOENT|No such file or directory).*\b(?:mkdir|mkdtemp|rename|symlink|link|copyfile)\b|cannot (?:create|touch|make)[^\n]*No such file or directory/i;
const SOCKET_ERROR = /socket: permission denied|error connecting to [^\n]*\((?:Permission denied|Operation not permitted)\)|socket\([^)]*\): (?:Permission denied|Operation not permitted)|connect EACCES|unix:\/\/[^\n]*(?:permission denied|EACCES)/i;
const PRIVILEGE_ERROR = /effective uid is not 0|must be setuid root|'nosuid' option|no new privileges|su: (?:Authentication failure|cannot set groups|System error)|set(?:e?[ug]id|groups)[^\n]*Operation not permitted/i;
const PID_ERROR = /\(\d+\) - No such process|kill: [^\n]*No such process|ProcessLookupError|\bESRCH\b/;
const NET_ERROR = /Network is unreachable|ENETUNREACH|Temporary failure in name resolution|Could not resolve host|EAI_AGAIN|getaddrinfo|Name or service not known|No address associated with hostname/i;
/** Quoted paths ('…', ‘…’, "…", `…'). */
const QUOTED = /['‘"`]([^'’"`\n]+)['’"]/g;
/** Unquoted absolute paths (a trailing `:`/`,` is the message's). */
const ABSOLUTE = /(?:^|[\s(=])(?:unix:\/\/)?(\/[^\s'"`()]+?)[:,]?(?=\s|$|\))/g;
/** `bash: path: error` for a relative path. */
const COLON_PATH = /^(?:[^\s:]+: )*(?:line \d+: )?([^:\n]+): (?:Permission denied|Read-only file system)/i;
const MAX_PATHS = 10;
/** The kind reported when one output shows several: the most specific first. */
const PRIORITY: DeniedKind[] = ["privilege", "daemon", "hidden", "socket", "write", "pid", "network"];

/**
 * Pure but for a stat of candidate socket paths: reads a failed sandboxed command (its
 * output and command line) for what the sandbox refused. Null when the failure does not
 * look like the sandbox's doing.
 */
export function detectSandboxDenied(input: DeniedInput): SandboxDenied | null {
  const found = new Map<DeniedKind, string[]>();
  const note = (kind: DeniedKind, path?: string) => {
    const list = found.get(kind) ?? found.set(kind, []).get(kind)!;
    if (path !== undefined && !list.includes(path) && list.length < MAX_PATHS) list.push(path);
  };
  const command = input.command ?? "";
  const hidden = input.hidden ?? [];
  const absolute = (p: string) => (isAbsolute(p) ? resolve(p) : resolve(input.cwd, p));
  const fsPath = (raw: string) => {
    const candidate = raw.trim();
    if (!candidate || /\s{2,}/.test(candidate) || /^[a-z][\w+.-]*:\/\//i.test(candidate)) return;
    if (!candidate.includes("/") && !/^[\w.-]+$/.test(candidate)) return;
    const abs = absolute(candidate);
    if (hidden.some((h) => under(abs, h))) note("hidden", abs);
    else if (!input.writableRoots.some((root) => under(abs, root))) note("write", abs);
  };
  if (privilegedWord(command)) note("privilege");
  if (daemonVerb(command)) note("daemon");
  let pathless = false;
  for (const line of input.output.split("\n")) {
    if (PRIVILEGE_ERROR.test(line)) note("privilege");
    else if (SOCKET_ERROR.test(line)) {
      note("socket");
      for (const m of line.matchAll(ABSOLUTE)) note("socket", resolve(m[1]!));
    } else if (FS_ERROR.test(line) || ENOENT_CREATING.test(line)) {
      const quoted = [...line.matchAll(QUOTED)].map((m) => m[1]!);
      const paths = quoted.length ? quoted : [...line.matchAll(ABSOLUTE)].map((m) => m[1]!);
      if (paths.length) paths.forEach(fsPath);
      else {
        const colon = COLON_PATH.exec(line);
        // `fatal: cannot mkdir ../origin.git: Read-only file system`: the path is the last word.
        if (colon) fsPath(colon[1]!.trim().split(/\s+/).pop()!);
        else pathless = true;
      }
    } else if (input.level === "namespaces" && PID_ERROR.test(line)) note("pid");
    else if (!input.network && NET_ERROR.test(line)) note("network");
  }
  // A permission error naming no path, from a program that used a socket (Python's traceback names socket.py).
  if (pathless && !found.has("socket") && /socket/i.test(`${input.output}\n${command}`)) note("socket");
  if (found.has("socket") && !found.get("socket")!.length) for (const p of socketPaths(command)) note("socket", p);
  const kind = PRIORITY.find((k) => found.has(k));
  if (!kind) return null;
  return { kind, paths: found.get(kind)!, hint: DENIED_HINTS[kind] };
}

/** Absolute paths in `text` that are unix sockets on this machine (or are named like one). */
function socketPaths(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(\/[^\s'"`()]+?)[:,)]?(?=[\s'"`()]|$)/g)) {
    const p = resolve(m[1]!);
    if (out.includes(p)) continue;
    if (p.endsWith(".sock") || isSocket(p)) out.push(p);
  }
  return out;
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}
