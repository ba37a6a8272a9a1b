/** Compiles the single executable `dist/agent-shell` for the host platform. */
import { $ } from "bun";
import { resolve } from "node:path";

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
  plugins: [
    {
      // The SDK server imports Ajv only to check elicitation answers, and agent-shell asks
      // flat yes/no forms: src/mcp/elicitation-validator.ts checks those, and Ajv stays out of every start.
      name: "sdk-server-without-ajv",
      setup(build) {
        build.onResolve({ filter: /\/validation\/ajv-provider\.js$/ }, (args) =>
          /[\\/]sdk[\\/]dist[\\/]esm[\\/]server[\\/]/.test(args.importer) ? { path: resolve("src/mcp/elicitation-validator.ts") } : undefined,
        );
      },
    },
  ],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
const size = Bun.file(outfile).size;
console.error(`built ${outfile} (${(size / 1e6).toFixed(1)} MB)`);
