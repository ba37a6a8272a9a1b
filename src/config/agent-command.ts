/** Subagent CLIs tried in order when no `agent_command` is configured. */
export const AUTODETECT_TEMPLATES: readonly string[][] = [
  ["claude", "-p", "{prompt}"],
  ["codex", "exec", "{prompt}"],
  ["gemini", "-p", "{prompt}"],
  ["clemini", "-p", "{prompt}", "--cwd", "{cwd}"],
];

/** The configured template, else the first autodetected one whose program is on PATH. */
export function resolveAgentTemplate(configured: string[] | undefined, path: string | undefined): string[] | null {
  if (configured) return configured;
  for (const template of AUTODETECT_TEMPLATES) {
    if (Bun.which(template[0]!, { PATH: path ?? "" })) return template;
  }
  return null;
}

/** `{prompt}` and `{cwd}` replaced inside each argument; an argument is never split. */
export function expandTemplate(template: string[], values: { prompt: string; cwd: string }): string[] {
  return template.map((arg) => arg.replace(/\{(prompt|cwd)\}/g, (_, key: "prompt" | "cwd") => values[key]));
}
