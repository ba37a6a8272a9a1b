/**
 * `bun run package`: the npm package set (SPEC §17), the way esbuild and biome ship binaries.
 * Writes to dist/npm/:
 *   agent-shell-VERSION.tgz              the launcher (npm/launcher.js) in `bin`, the library
 *                                        (`import { createToolHost } from "agent-shell"` under
 *                                        Bun) in lib/, with optionalDependencies on every
 *                                        platform package
 *   agent-shell-linux-x64-VERSION.tgz    os/cpu set, the compiled binary in bin/agent-shell
 *   agent-shell-linux-arm64-VERSION.tgz  and the library's spawn helper in bin/agent-shell-helper
 * npm installs only the platform package whose os/cpu match; no install script runs or
 * downloads anything. The staged folders (dist/npm/stage/) are removed once packed:
 * `tar -xzf` a tarball to look inside.
 */
import { $ } from "bun";
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BUN_TARGETS, compileBinary, compileHelper } from "../build.ts";
import pkg from "../package.json" with { type: "json" };

const ROOT = resolve(import.meta.dir, "..");
const OUT = join(ROOT, "dist/npm");
const STAGE = join(OUT, "stage");
const PLATFORMS = Object.keys(BUN_TARGETS) as Array<keyof typeof BUN_TARGETS>;

const common = {
  version: pkg.version,
  license: pkg.license,
  ...(("repository" in pkg) ? { repository: (pkg as { repository: unknown }).repository } : {}),
};

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

async function stagePlatform(platform: keyof typeof BUN_TARGETS): Promise<string> {
  const [os, cpu] = platform.split("-") as [string, string];
  const dir = join(STAGE, `agent-shell-${platform}`);
  mkdirSync(join(dir, "bin"), { recursive: true });
  await compileBinary(join(dir, "bin/agent-shell"), BUN_TARGETS[platform]);
  chmodSync(join(dir, "bin/agent-shell"), 0o755);
  // The library runs the spawn helper from here (the binary carries its own copy inside).
  compileHelper(BUN_TARGETS[platform], join(dir, "bin/agent-shell-helper"));
  writeJson(join(dir, "package.json"), {
    name: `agent-shell-${platform}`,
    ...common,
    description: `The ${platform} binary of agent-shell (installed by the agent-shell package; not meant to be used directly).`,
    os: [os],
    cpu: [cpu],
    files: ["bin/agent-shell", "bin/agent-shell-helper"],
    preferUnplugged: true,
  });
  writeFileSync(
    join(dir, "README.md"),
    `# agent-shell-${platform}\n\nThe compiled ${platform} binary of [agent-shell](https://www.npmjs.com/package/agent-shell). ` +
      "Install `agent-shell` instead: npm picks this package on matching machines.\n",
  );
  return dir;
}

/**
 * The library as one module for Bun (lib/index.js): its dependencies bundled in, macros
 * evaluated (Bun runs none from node_modules), and the spawn helper that the sources take
 * from build/ taken instead from the platform package installed beside it.
 */
async function bundleLibrary(outdir: string): Promise<void> {
  const result = await Bun.build({
    entrypoints: [join(ROOT, "src/index.ts")],
    outdir,
    naming: "index.js",
    target: "bun",
    format: "esm",
    plugins: [
      {
        name: "helper-from-platform-package",
        setup(build) {
          build.onResolve({ filter: /\/build\/agent-shell-helper$/ }, () => ({ path: "agent-shell-helper", namespace: "platform-helper" }));
          build.onLoad({ filter: /.*/, namespace: "platform-helper" }, () => ({
            loader: "js",
            contents:
              'import { createRequire } from "node:module";\n' +
              "export default createRequire(import.meta.url).resolve(`agent-shell-${process.platform}-${process.arch}/bin/agent-shell-helper`);\n",
          }));
        },
      },
    ],
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    process.exit(1);
  }
}

async function stageMain(): Promise<string> {
  const dir = join(STAGE, "agent-shell");
  await bundleLibrary(join(dir, "lib"));
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(join(ROOT, "npm/launcher.js"), join(dir, "bin/agent-shell.js"));
  chmodSync(join(dir, "bin/agent-shell.js"), 0o755);
  copyFileSync(join(ROOT, "README.md"), join(dir, "README.md"));
  writeJson(join(dir, "package.json"), {
    name: "agent-shell",
    ...common,
    description: pkg.description,
    keywords: ["mcp", "shell", "agent", "sandbox", "pty", "ssh"],
    bin: { "agent-shell": "bin/agent-shell.js" },
    exports: { ".": { bun: "./lib/index.js" } },
    files: ["bin/agent-shell.js", "lib/index.js"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(PLATFORMS.map((p) => [`agent-shell-${p}`, pkg.version])),
  });
  return dir;
}

rmSync(OUT, { recursive: true, force: true });
mkdirSync(STAGE, { recursive: true });
const dirs = [await stageMain()];
for (const platform of PLATFORMS) dirs.push(await stagePlatform(platform));
// --ignore-scripts: packing runs no lifecycle script of ours (there are none) or of npm's.
await Promise.all(dirs.map((dir) => $`npm pack --silent --ignore-scripts --pack-destination ${OUT}`.cwd(dir).quiet()));
for (const dir of dirs) {
  const name = `${dir.slice(STAGE.length + 1)}-${pkg.version}.tgz`;
  console.error(`packed dist/npm/${name} (${(Bun.file(join(OUT, name)).size / 1e6).toFixed(1)} MB)`);
}
rmSync(STAGE, { recursive: true, force: true }); // two ~110 MB binaries, already in the tarballs
