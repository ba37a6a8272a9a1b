import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { under } from "../paths/under.ts";

/**
 * Files that decide what runs outside the sandbox later (SPEC §26): agent-shell's own config
 * and binary, the harnesses' settings and hooks, shell startup files, git's global config,
 * systemd user units and autostart entries. A command must never change them, whatever the
 * writable roots (a home folder as a root included): at the namespaces level each one under
 * a root is bound read-only. What mounts cannot hold — one made where there was none, and at
 * the Landlock level, which has no read-only holes in a writable tree, one changed — is put
 * back as it was while the command runs and when it ends (control-guard.ts).
 */
const HOME_CONTROL_FILES = [
  ".claude/settings.json", ".claude/settings.local.json", ".claude/hooks", ".codex/config.toml", ".gemini/settings.json",
  ".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_logout", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".config/fish/config.fish",
  ".gitconfig", ".config/git", ".config/systemd/user", ".config/autostart",
];

/** agent-shell's config folder: made when missing, so that there is something to hold read-only. */
function configFolder(home: string, env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(home, ".config"), "agent-shell");
}

/** The running binary, and the npm package folder it was started from (an npx cache included). */
function ownBinary(): string[] {
  const binary = process.execPath;
  const inPackage = /^(.*\/node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(binary);
  return inPackage ? [binary, inPackage[1]!] : [binary];
}

/** The control files that may not exist yet (made by a command, they would run later): files only. */
export function controlFileNames(home: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const folders = new Set([".claude/hooks", ".config/git", ".config/systemd/user", ".config/autostart"]);
  return [join(configFolder(home, env), "config.toml"), ...HOME_CONTROL_FILES.filter((p) => !folders.has(p)).map((p) => join(home, p))];
}

/** Every control file that exists (agent-shell's config folder made first), as real paths. */
export function controlFiles(home: string, env: NodeJS.ProcessEnv = process.env): string[] {
  try {
    mkdirSync(configFolder(home, env), { recursive: true, mode: 0o700 });
  } catch {}
  // The far binary cache (when there is one) is checked by its hash before every start, too.
  const wanted = [configFolder(home, env), join(home, ".cache", "agent-shell"), ...HOME_CONTROL_FILES.map((p) => join(home, p)), ...ownBinary()];
  return [...new Set(wanted.flatMap((p) => real(p) ?? []))];
}

/** The control files that lie inside one of `roots` (what a command could otherwise change). */
export function controlFilesUnder(roots: string[], home: string): string[] {
  return controlFiles(home).filter((file) => roots.some((root) => under(file, root)));
}

function real(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}
