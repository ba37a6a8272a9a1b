import { CodedError } from "../../errors.ts";

/**
 * Errors of the SSH runtime: coded errors (the SPEC code and context travel with them, so
 * the runtime knows no tool) whose class says where they came from.
 */
export class SshError extends CodedError {
  constructor(code: "IO_ERROR" | "NOT_FOUND" | "INVALID_ARGUMENT", message: string, context: Record<string, unknown> = {}) {
    super(code, message, context);
  }
}

export interface ConnectFailureInfo {
  name: string;
  target: string;
  /** Set by the host key check when it refused the key. */
  hostKeyProblem?: string;
  /** Authentication methods offered, for the message. */
  methods: string[];
}

/** Turns an ssh2/socket error into a message naming the cause. */
export function connectError(err: Error & { level?: string; code?: string }, info: ConnectFailureInfo): SshError {
  const where = `host '${info.name}' (${info.target})`;
  const ctx = { host: info.name, target: info.target };
  if (info.hostKeyProblem) return new SshError("IO_ERROR", `Cannot connect to ${where}: ${info.hostKeyProblem}`, ctx);
  const code = err.code ?? "";
  if (code === "ECONNREFUSED") {
    return new SshError("IO_ERROR", `Cannot connect to ${where}: connection refused (nothing is listening on that port)`, ctx);
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || err.level === "client-dns") {
    return new SshError("IO_ERROR", `Cannot connect to ${where}: DNS lookup failed for the host name (${err.message})`, ctx);
  }
  if (err.level === "client-timeout" || code === "ETIMEDOUT") {
    return new SshError("IO_ERROR", `Cannot connect to ${where}: timed out (${err.message})`, ctx);
  }
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") {
    return new SshError("IO_ERROR", `Cannot connect to ${where}: host unreachable (${code})`, ctx);
  }
  if (err.level === "client-authentication") {
    const tried = info.methods.length ? info.methods.join(", ") : "none (no identity_file, no SSH agent, no default key)";
    return new SshError("IO_ERROR", `Cannot connect to ${where}: authentication failed; methods tried: ${tried}`, ctx);
  }
  return new SshError("IO_ERROR", `Cannot connect to ${where}: ${err.message}`, ctx);
}
