/**
 * `bun run package`: the npm package set (SPEC §17), the way esbuild and biome ship binaries.
 * Writes to dist/npm/:
 *   agent-shell-VERSION.tgz              the launcher (npm/launcher.js) in `bin`, with
 *                                        optionalDependencies on every platform package
 *   agent-shell-linux-x64-VERSION.tgz    os/cpu set, the compiled binary in bin/agent-shell
 *   agent-shell-linux-arm64-VERSION.tgz
 * npm installs only the platform package whose os/cpu match; no install script runs or
 * downloads anything. The staged folders (dist/npm/stage/) are removed once packed:
 * `tar -xzf` a tarball to look inside.
 */
import { $ } from "bun";
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BUN_TARGETS, compileBinary } from "../build.ts";
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
  writeJson(join(dir, "package.json"), {
    name: `agent-shell-${platform}`,
    ...common,
    description: `The ${platform} binary of agent-shell (installed by the agent-shell package; not meant to be used directly).`,
    os: [os],
    cpu: [cpu],
    files: ["bin/agent-shell"],
    preferUnplugged: true,
  });
  writeFileSync(
    join(dir, "README.md"),
    `# agent-shell-${platform}\n\nThe compiled ${platform} binary of [agent-shell](https://www.npmjs.com/package/agent-shell). ` +
      "Install `agent-shell` instead: npm picks this package on matching machines.\n",
  );
  return dir;
}

function stageMain(): string {
  const dir = join(STAGE, "agent-shell");
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
    files: ["bin/agent-shell.js"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(PLATFORMS.map((p) => [`agent-shell-${p}`, pkg.version])),
  });
  return dir;
}

rmSync(OUT, { recursive: true, force: true });
mkdirSync(STAGE, { recursive: true });
const dirs = [stageMain()];
for (const platform of PLATFORMS) dirs.push(await stagePlatform(platform));
// --ignore-scripts: packing runs no lifecycle script of ours (there are none) or of npm's.
await Promise.all(dirs.map((dir) => $`npm pack --silent --ignore-scripts --pack-destination ${OUT}`.cwd(dir).quiet()));
for (const dir of dirs) {
  const name = `${dir.slice(STAGE.length + 1)}-${pkg.version}.tgz`;
  console.error(`packed dist/npm/${name} (${(Bun.file(join(OUT, name)).size / 1e6).toFixed(1)} MB)`);
}
rmSync(STAGE, { recursive: true, force: true }); // two ~110 MB binaries, already in the tarballs
