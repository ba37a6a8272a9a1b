/**
 * Compiles the single executable `dist/agent-shell` for the host platform; `compileBinary`
 * is also what `bun run package` (scripts/package.ts) uses for every platform it ships.
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";

/** Bun's cross-compilation targets of the platforms agent-shell ships (npm os-cpu → Bun target). */
export const BUN_TARGETS = { "linux-x64": "bun-linux-x64", "linux-arm64": "bun-linux-arm64" } as const;

/** Compiles src/main.ts into `outfile`, for the host or for one of BUN_TARGETS; exits 1 on a build error. */
export async function compileBinary(outfile: string, target?: (typeof BUN_TARGETS)[keyof typeof BUN_TARGETS]): Promise<void> {
  rmSync(outfile, { force: true });
  const result = await Bun.build({
    entrypoints: [resolve(import.meta.dir, "src/main.ts")],
    compile: target ? { outfile, target } : { outfile },
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
            /[\\/]sdk[\\/]dist[\\/]esm[\\/]server[\\/]/.test(args.importer)
              ? { path: resolve(import.meta.dir, "src/mcp/elicitation-validator.ts") }
              : undefined,
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
  console.error(`built ${outfile}${target ? ` for ${target}` : ""} (${(size / 1e6).toFixed(1)} MB)`);
}

if (import.meta.main) {
  // AGENT_SHELL_BINARY lets parallel work trees build without clobbering each other.
  await compileBinary(process.env.AGENT_SHELL_BINARY ?? "dist/agent-shell");
}
