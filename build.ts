/**
 * Compiles the single executable `dist/agent-shell` for the host platform; `compileBinary`
 * is also what `bun run package` (scripts/package.ts) uses for every platform it ships.
 */
import { mkdirSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** Bun's cross-compilation targets of the platforms agent-shell ships (npm os-cpu → Bun target). */
export const BUN_TARGETS = { "linux-x64": "bun-linux-x64", "linux-arm64": "bun-linux-arm64" } as const;

/** The C compiler that builds the spawn helper for each target (Debian's gcc and its arm64 cross compiler). */
const HELPER_CC = { "bun-linux-x64": "x86_64-linux-gnu-gcc", "bun-linux-arm64": "aarch64-linux-gnu-gcc" } as const;
const HOST_TARGET = process.arch === "arm64" ? "bun-linux-arm64" : "bun-linux-x64";
/** Where the helper is compiled to; src/runtime/spawn-helper/helper-binary.ts embeds it. */
export const HELPER_OUT = resolve(import.meta.dir, "build/agent-shell-helper");

/**
 * The spawn helper (src/runtime/spawn-helper/agent-shell-helper.c), static so that no loader
 * variable acts on it and it runs the same everywhere, for the target being compiled.
 */
export function compileHelper(target: (typeof BUN_TARGETS)[keyof typeof BUN_TARGETS] = HOST_TARGET, out = HELPER_OUT): void {
  mkdirSync(dirname(out), { recursive: true });
  const cc = Bun.which(HELPER_CC[target]) ?? (target === HOST_TARGET ? Bun.which("gcc") : null);
  if (!cc) {
    console.error(`${HELPER_CC[target]} is missing: run scripts/ensure-system-deps.sh (it installs gcc and the arm64 cross compiler)`);
    process.exit(1);
  }
  const sources = ["agent-shell-helper.c", "relay.c"].map((f) => resolve(import.meta.dir, "src/runtime/spawn-helper", f));
  const built = Bun.spawnSync([cc, "-static", "-O2", "-s", "-Wall", "-Werror", "-o", out, ...sources], { stdout: "inherit", stderr: "inherit" });
  if (built.exitCode !== 0) process.exit(1);
}

/** Compiles src/main.ts into `outfile`, for the host or for one of BUN_TARGETS; exits 1 on a build error. */
export async function compileBinary(outfile: string, target?: (typeof BUN_TARGETS)[keyof typeof BUN_TARGETS]): Promise<void> {
  rmSync(outfile, { force: true });
  compileHelper(target);
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
  // build/agent-shell-helper is what the sources embed (and tests run): the host's again.
  if (target && target !== HOST_TARGET) compileHelper(HOST_TARGET);
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
