/**
 * `util.parseArgs`, loaded when a verb runs: a static import of node:util is hoisted into
 * every start of the binary (the bundle is one file), and costs milliseconds there.
 */
export function lazyParseArgs<T extends import("node:util").ParseArgsConfig>(config: T): ReturnType<typeof import("node:util").parseArgs<T>> {
  const { parseArgs } = require("node:util") as typeof import("node:util");
  return parseArgs(config);
}
