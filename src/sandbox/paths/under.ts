/** Whether `path` is `root` or inside it (by path segment, not by prefix). */
export function under(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : root + "/");
}
