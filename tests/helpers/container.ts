/**
 * A real Podman container for the far-side tests (SPEC §16). No image registry is reachable
 * here, so its root is an overlay of this machine's own filesystem (`--rootfs /:O`): writes
 * stay in the container. Debian's podman 4.3 needs runc (crun refuses hybrid cgroups) and
 * explicit ulimits (the defaults exceed the hard limits). remove() deletes it and everything
 * that ran in it.
 */
export interface TestContainer {
  name: string;
  /** Runs a command inside it (podman exec); its output and exit code. */
  exec(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  remove(): Promise<void>;
}

export async function startContainer(prefix = "as-test-far"): Promise<TestContainer> {
  const name = `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const run = await podman([
    "run", "-d", "--name", name, "--runtime", "runc",
    "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=8192:8192",
    "--rootfs", "/:O", "sleep", "infinity",
  ]);
  if (run.code !== 0) throw new Error(`podman run failed: ${run.stderr}`);
  return {
    name,
    exec: (argv) => podman(["exec", name, ...argv]),
    async remove() {
      await podman(["rm", "-f", "-t", "0", name]);
    },
  };
}

export async function podman(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(["podman", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Whether a container of this name exists (running or not). */
export async function containerExists(name: string): Promise<boolean> {
  return (await podman(["container", "exists", name])).code === 0;
}
