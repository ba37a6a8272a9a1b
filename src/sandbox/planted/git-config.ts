/**
 * The keys of a git config file that make git run a program (SPEC §25), found and commented
 * out. Pure functions over the file's text: the guard (git-guard.ts) reads and writes the file.
 */

/** One setting as git would read it: `section[.subsection].key`, its value, and the line it sits on. */
export interface ConfigEntry {
  /** `core.fsmonitor`, `alias.st`, `diff.pdf.textconv` (section and key lower-cased, as git compares them). */
  name: string;
  value: string;
  line: number;
}

/** Keys that name a program in whatever section they sit (`diff.<driver>.textconv`, `gpg.ssh.program`, …). */
const PROGRAM_KEYS = new Set([
  "fsmonitor",
  "hookspath",
  "sshcommand",
  "editor",
  "askpass",
  "gitproxy",
  "textconv",
  "command",
  "cmd",
  "driver",
  "helper",
  "clean",
  "smudge",
  "process",
  "program",
  "external",
  "packobjectshook",
  "alternaterefscommand",
  "defaultkeycommand",
  "uploadpack",
  "receivepack",
  "difffilter",
  "smtpserver",
]);

/** Whether git would run a program because of this entry. */
export function runsProgram(entry: ConfigEntry): boolean {
  const parts = entry.name.split(".");
  const section = parts[0]!;
  const key = parts[parts.length - 1]!;
  if (section === "include" || section === "includeif") return key === "path";
  if (section === "alias" || (section === "submodule" && key === "update")) return entry.value.trimStart().startsWith("!");
  // pager.<command> is a boolean or the pager program; core.pager is a program.
  if (section === "pager") return !/^(true|false|yes|no|on|off|1|0|)$/i.test(entry.value.trim());
  if (section === "core" && key === "pager") return true;
  if (section === "sequence" && key === "editor") return true;
  if (section === "hook" && key === "command") return true;
  return PROGRAM_KEYS.has(key);
}

/** The settings of a config file's text (continuation lines joined; quotes and escapes kept as written). */
export function configEntries(text: string): ConfigEntry[] {
  const entries: ConfigEntry[] = [];
  const lines = text.split("\n");
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    let rest = lines[i]!;
    const header = /^\s*\[([^\]"\s]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(rest);
    if (header) {
      const [name, ...dotted] = header[1]!.split(".");
      // `[section "sub"]` keeps the subsection's case; the old `[section.sub]` form lower-cases it.
      const sub = header[2] ?? (dotted.length ? dotted.join(".").toLowerCase() : undefined);
      section = sub === undefined ? name!.toLowerCase() : `${name!.toLowerCase()}.${sub}`;
      rest = rest.slice(header[0].length); // a setting may follow on the same line
    }
    const setting = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(stripComment(rest));
    if (!setting || !section) continue;
    const start = i;
    let value = setting[2] ?? "";
    while (value.endsWith("\\") && i + 1 < lines.length) value = value.slice(0, -1) + lines[++i];
    entries.push({ name: `${section}.${setting[1]!.toLowerCase()}`, value: value.trim(), line: start });
  }
  return entries;
}

/** A line's text before a comment that is not inside quotes. */
function stripComment(line: string): string {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "\\") i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === "#" || c === ";")) return line.slice(0, i);
  }
  return line;
}

/** What identifies a setting across two versions of a file: where it moved does not matter. */
export function settingKey(entry: ConfigEntry): string {
  return `${entry.name}\0${entry.value}`;
}

export const DISARM_MARK = "# disarmed by agent-shell (written by a sandboxed command): ";

/**
 * `text` with every setting that runs a program and is not among `keep` (settingKey of what
 * was there before) commented out; null when nothing is. A setting written on its section's
 * header line is moved to a line of its own first.
 */
export function disarmConfigText(text: string, keep: ReadonlySet<string>): { text: string; disarmed: ConfigEntry[] } | null {
  const disarmed = configEntries(text).filter((e) => runsProgram(e) && !keep.has(settingKey(e)));
  if (disarmed.length === 0) return null;
  const lines = text.split("\n");
  for (const entry of disarmed) {
    let i = entry.line;
    const header = /^\s*\[[^\]]*\]/.exec(lines[i]!);
    if (header && lines[i]!.slice(header[0].length).trim()) {
      lines.splice(i + 1, 0, lines[i]!.slice(header[0].length));
      lines[i] = header[0];
      for (const later of disarmed) if (later.line > entry.line) later.line++;
      i++;
      entry.line = i;
    }
    lines[i] = DISARM_MARK + lines[i];
    // Continuation lines of the same value are commented too.
    while (lines[i]!.endsWith("\\") && i + 1 < lines.length) lines[++i] = DISARM_MARK + lines[i];
  }
  return { text: lines.join("\n"), disarmed };
}

/** The settings of `text` that run a program, as keys for `disarmConfigText`'s `keep`. */
export function programSettings(text: string): Set<string> {
  return new Set(configEntries(text).filter(runsProgram).map(settingKey));
}

/** The exact line with which a person puts a disarmed setting back. */
export function restoreLine(gitDir: string, file: string, entry: ConfigEntry): string {
  const where = gitDir.endsWith("/.git") ? `-C ${quote(gitDir.slice(0, -5))}` : `--git-dir=${quote(gitDir)}`;
  const scope = file.endsWith("config.worktree") ? " --worktree" : "";
  return `git ${where} config${scope} --add ${entry.name} ${quote(unquoteValue(entry.value))}`;
}

/** A config value as git reads it: surrounding quotes dropped, `\"` and `\\` unescaped. */
function unquoteValue(value: string): string {
  return value.replace(/\\(["\\])|"/g, (_, escaped: string | undefined) => escaped ?? "");
}

function quote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
