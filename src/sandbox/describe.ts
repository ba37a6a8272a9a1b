import type { Sandbox } from "./setup.ts";

/** One sentence for MCP `instructions`: the containment in force, said loudly when there is none. */
export function sandboxInstructions(sandbox: Sandbox): string {
  if (sandbox.unavailable) {
    const missing = sandbox.choice.level === null ? sandbox.choice.missing : "";
    return (
      `WARNING: the default OS sandbox (workspace-write) is unavailable on this machine (${missing}); ` +
      `local commands run WITHOUT containment and results say sandbox: "unavailable".`
    );
  }
  if (sandbox.mode === "off") return "The OS sandbox is off: local commands run without containment.";
  const level = sandbox.choice.level;
  const notes = sandbox.notes(level ?? undefined);
  return (
    `Local commands run in an OS sandbox (mode ${sandbox.mode}, level ${level}): ` +
    (sandbox.mode === "read-only" ? "writes only to the temp dir; " : "writes only under the allowed paths, the temp dir and tool caches; ") +
    `secrets (~/.ssh, ~/.aws, …) are unreadable. ` +
    (sandbox.networkAllowlist
      ? "The network is reached by name only, through agent-shell's proxy (package registries and code hosts are allowed; another name is asked about or refused: network_denied in the result); ports a command listens on are published on the host's loopback. "
      : "") +
    `A failure it causes carries sandbox_denied {kind, paths, hint}; ` +
    `a call may ask for sandbox: "off", which needs the user's confirmation.` +
    (notes.length ? ` Not held here: ${notes.join("; ")}.` : "")
  );
}
