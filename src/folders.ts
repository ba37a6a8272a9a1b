import { readdirSync } from "node:fs";
import { join } from "node:path";

/** The folders directly inside `dir`, as paths (none when it cannot be read). */
export function foldersIn(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}
