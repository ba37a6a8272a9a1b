import { chmodSync, chownSync, lstatSync, mkdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Device nodes of the sandbox's own (SPEC §20). bwrap's `--dev` binds the host's
 * `/dev/null`, `/dev/zero`, … into the sandbox: a root command (no capabilities, but the
 * owner of those nodes) could chmod them and break every program on the machine. So a
 * server running as root binds nodes of its own instead: made once in the state dir (which
 * every sandbox hides), owned by nobody with mode 0666, so a command can use them and,
 * owning none of them and holding no capability, change none. Other users cannot chmod the
 * host's root-owned nodes anyway and keep bwrap's.
 */
const NODES: [name: string, major: number, minor: number][] = [
  ["null", 1, 3],
  ["zero", 1, 5],
  ["full", 1, 7],
  ["random", 1, 8],
  ["urandom", 1, 9],
  ["tty", 5, 0],
];
const NOBODY = 65534;

let hostDevices = false;

/** Whether a root server's sandbox had to use the host's nodes (said in results and `sandbox check`, never silent). */
export function usesHostDevices(): boolean {
  return hostDevices;
}

/** [node made here, /dev path] pairs to bind over bwrap's, or [] when not needed or not possible. */
export function ownDeviceNodes(stateRoot: string): [string, string][] {
  if (process.getuid?.() !== 0) return [];
  const pairs = madeDeviceNodes(stateRoot);
  hostDevices = pairs.length === 0;
  return pairs;
}

function madeDeviceNodes(stateRoot: string): [string, string][] {
  const dir = join(stateRoot, "sandbox-dev");
  const pairs = NODES.map(([name]) => [join(dir, name), `/dev/${name}`] as [string, string]);
  if (NODES.every(([name, major, minor]) => intact(join(dir, name), major, minor))) return pairs;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const script = NODES.map(([name, major, minor]) => `rm -f -- '${join(dir, name)}' && mknod -m 666 -- '${join(dir, name)}' c ${major} ${minor}`).join(" && ");
    const made = Bun.spawnSync(["/bin/sh", "-c", script], { stdout: "ignore", stderr: "pipe", env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } });
    if (made.exitCode !== 0) return [];
    for (const [path] of pairs) {
      chownSync(path, NOBODY, NOBODY);
      chmodSync(path, 0o666);
    }
  } catch {
    return [];
  }
  return NODES.every(([name, major, minor]) => intact(join(dir, name), major, minor)) ? pairs : [];
}

function intact(path: string, major: number, minor: number): boolean {
  try {
    const st = lstatSync(path);
    return st.isCharacterDevice() && st.uid === NOBODY && (st.mode & 0o7777) === 0o666 && st.rdev === makedev(major, minor);
  } catch {
    return false;
  }
}

/** Linux's encoding of a device number (what stat reports as rdev). */
function makedev(major: number, minor: number): number {
  return ((major & 0xfff) << 8) | (minor & 0xff) | ((minor & ~0xff) << 12);
}
