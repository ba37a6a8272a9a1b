import { homedir } from "node:os";

/**
 * `~` and `~/…` in a configured path mean the user's home: `$HOME`, or the account's home
 * directory when HOME is unset or empty (as OpenSSH does). `~user` and anything else is
 * left as it is.
 */
export function expandHome(path: string, env: NodeJS.ProcessEnv = process.env): string {
  if (path !== "~" && !path.startsWith("~/")) return path;
  return (env.HOME || homedir()) + path.slice(1);
}
