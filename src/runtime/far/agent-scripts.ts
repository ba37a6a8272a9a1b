import { shq } from "../ssh/quote.ts";

/**
 * The far side's POSIX sh scripts. The launcher checks for agent-shell of our version (its
 * SHA-256 first, when the far side is our platform: a binary a far command replaced is never
 * run, not even for --version) and execs `agent-shell mcp --shared`, after one status line
 * (`agent-shell-far …`) that tells the near side whether it is speaking MCP now or what is
 * missing or different. The installer receives
 * the binary on stdin under a temporary name and renames it only once its SHA-256 matches,
 * so a failed or partial copy never runs.
 */
export const STATUS_PREFIX = "agent-shell-far ";

/** Where the far side keeps its agent-shell: the host's agent_path, else the per-version cache. */
export function agentPathExpr(version: string, agentPath: string | undefined): string {
  return farPathExpr(agentPath ?? `~/.cache/agent-shell/${version}/agent-shell`);
}

/** A far-side path as a sh word: `~` and `~/…` become the far side's $HOME. */
export function farPathExpr(path: string): string {
  if (path === "~") return `"$HOME"`;
  if (path.startsWith("~/")) return `"$HOME"/${shq(path.slice(2))}`;
  return shq(path);
}

export interface LaunchOptions {
  version: string;
  agentPath?: string;
  /** The far connection's working directory (`~` = the far home) and its other allowed paths. */
  cwd: string;
  allow: string[];
  /** The far connection's declared sandbox mode (absent: the far side's default). */
  sandbox?: string;
  /** This binary's SHA-256 and platform: a far binary on the same platform must have that hash (absent: run from source, no hash to hold it to). */
  sha256?: string;
  platform?: { os: string; arch: string };
}

export function launchScript(o: LaunchOptions): string {
  const want = `agent-shell ${o.version}`;
  const args = ["--cwd", farPathExpr(o.cwd), ...o.allow.flatMap((a) => ["--allow", farPathExpr(a)]), ...(o.sandbox ? ["--sandbox", shq(o.sandbox)] : [])];
  const hashCheck = o.sha256 && o.platform
    ? [
        `if [ -e "$p" ] && [ "$(uname -s) $(uname -m)" = ${shq(`${o.platform.os} ${o.platform.arch}`)} ]; then`,
        `  s=$(sha256sum "$p" 2>/dev/null || shasum -a 256 "$p" 2>/dev/null) || { echo "${STATUS_PREFIX}error neither sha256sum nor shasum is installed there to check $p"; exit 0; }`,
        `  s=\${s%% *}`,
        `  [ "$s" = ${shq(o.sha256)} ] || { echo "${STATUS_PREFIX}differs $p $s"; exit 0; }`,
        `fi`,
      ]
    : [];
  return [
    `p=${agentPathExpr(o.version, o.agentPath)}`,
    ...hashCheck,
    `v=$("$p" --version 2>/dev/null) || v=`,
    `if [ "$v" = ${shq(want)} ]; then`,
    `  echo "${STATUS_PREFIX}ready $HOME"`,
    `  exec "$p" mcp --shared ${args.join(" ")}`,
    `fi`,
    `if [ -e "$p" ]; then echo "${STATUS_PREFIX}other $p \${v:-unknown}"; exit 0; fi`,
    `echo "${STATUS_PREFIX}missing $p $(uname -s) $(uname -m)"`,
  ].join("\n");
}

export function installScript(version: string, agentPath: string | undefined, sha256: string): string {
  return [
    `p=${agentPathExpr(version, agentPath)}`,
    `t="$p.partial.$$"`,
    `mkdir -p "$(dirname "$p")" || { echo "${STATUS_PREFIX}error cannot create the directory of $p"; exit 1; }`,
    `trap 'rm -f "$t"' EXIT`,
    `trap 'exit 1' INT TERM HUP`,
    `cat > "$t" || { echo "${STATUS_PREFIX}error cannot write $t"; exit 1; }`,
    `s=$(sha256sum "$t" 2>/dev/null || shasum -a 256 "$t" 2>/dev/null) || { echo "${STATUS_PREFIX}error neither sha256sum nor shasum is installed there"; exit 1; }`,
    `s=\${s%% *}`,
    `[ "$s" = ${shq(sha256)} ] || { echo "${STATUS_PREFIX}error checksum mismatch: received $(wc -c < "$t") bytes with SHA-256 $s"; exit 1; }`,
    `chmod 755 "$t" && mv -f "$t" "$p" || { echo "${STATUS_PREFIX}error cannot install $p"; exit 1; }`,
    `echo "${STATUS_PREFIX}installed $p"`,
  ].join("\n");
}

/** What the launcher's status line says. */
export type LaunchStatus =
  | { kind: "ready"; home: string }
  | { kind: "other"; path: string; version: string }
  | { kind: "missing"; path: string; os: string; arch: string }
  | { kind: "differs"; path: string; sha256: string }
  | { kind: "error"; message: string }
  | { kind: "unknown"; line: string };

export function parseStatus(line: string): LaunchStatus {
  if (!line.startsWith(STATUS_PREFIX)) return { kind: "unknown", line };
  const words = line.slice(STATUS_PREFIX.length).trim().split(" ");
  if (words[0] === "ready") return { kind: "ready", home: words.slice(1).join(" ") };
  if (words[0] === "missing" && words.length >= 4) {
    return { kind: "missing", path: words.slice(1, -2).join(" "), os: words.at(-2)!, arch: words.at(-1)! };
  }
  if (words[0] === "differs" && words.length >= 3) return { kind: "differs", path: words.slice(1, -1).join(" "), sha256: words.at(-1)! };
  if (words[0] === "error") return { kind: "error", message: words.slice(1).join(" ") };
  if (words[0] === "other" && words.length >= 3) return { kind: "other", path: words.slice(1, -1).join(" "), version: words.at(-1)! };
  return { kind: "unknown", line };
}

/** This binary's platform as `uname -s` and `uname -m` name it. */
export function nearPlatform(): { os: string; arch: string } {
  const os = process.platform === "linux" ? "Linux" : process.platform === "darwin" ? "Darwin" : process.platform;
  const arch = process.arch === "x64" ? "x86_64" : process.arch === "arm64" ? (process.platform === "darwin" ? "arm64" : "aarch64") : process.arch;
  return { os, arch };
}
