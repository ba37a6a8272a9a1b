/** Compiles the single executable `dist/agent-shell` for the host platform. */
import { $ } from "bun";

// AGENT_SHELL_BINARY lets parallel work trees build without clobbering each other.
const outfile = process.env.AGENT_SHELL_BINARY ?? "dist/agent-shell";
await $`rm -f ${outfile}`;
const result = await Bun.build({
  entrypoints: ["src/main.ts"],
  compile: { outfile },
  minify: true,
  bytecode: true,
  format: "esm",
  target: "bun",
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
const size = Bun.file(outfile).size;
console.error(`built ${outfile} (${(size / 1e6).toFixed(1)} MB)`);
