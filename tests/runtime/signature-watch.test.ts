/**
 * The kept sandbox's signature is looked up once and kept while an inotify watch on the
 * folder entries it depends on sees no change (src/runtime/containment/sandbox-signature.ts, entry-watch.ts).
 * Each change that makes a path another file must still give a new signature at the very
 * next look; changes that do not must not cost a new look. Everything happens in a temp dir
 * this file makes (the mount is a tmpfs on one of its own folders, unmounted after).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigSchema } from "../../src/config/schema.ts";
import { EntryWatch } from "../../src/runtime/containment/entry-watch.ts";
import { sandboxFromConfig } from "../../src/sandbox/setup.ts";
import { sandboxSignature } from "../../src/runtime/containment/sandbox-signature.ts";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "as-signature-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let made = 0;

/** A workspace with a repository, and a policy hiding `secret` (a path under the scratch dir). */
function setup(options: { secretVia?: "symlink" } = {}) {
  const base = join(scratch, `case-${++made}`);
  const workspace = join(base, "workspace");
  mkdirSync(join(workspace, ".git", "hooks"), { recursive: true });
  writeFileSync(join(workspace, ".git", "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(workspace, ".git", "config"), "[core]\n");
  let secret = join(base, "secrets", "token");
  mkdirSync(join(base, "secrets"));
  if (options.secretVia === "symlink") {
    symlinkSync(join(base, "secrets"), join(base, "link"));
    secret = join(base, "link", "token");
  }
  const config = ConfigSchema.parse({ sandbox_deny_read: [secret] });
  const sandbox = sandboxFromConfig(config, { allowedRoots: [workspace], stateRoot: join(base, "state"), defaultStateRoot: join(base, "state") });
  const policy = sandbox.forCall("workspace-write").run!.policy;
  return { base, workspace, secret: join(base, "secrets", "token"), look: () => sandboxSignature(policy, workspace) };
}

describe("the signature under watch", () => {
  test("a secret made, then replaced, outside: a new signature at the next look each time", () => {
    const { secret, look } = setup();
    const before = look();
    writeFileSync(secret, "a");
    const made = look();
    expect(made).not.toBe(before);
    expect(made).toContain(secret);
    rmSync(secret);
    writeFileSync(secret, "b");
    expect(look()).not.toBe(made);
  });

  test("a secret reached through a symlink is still seen when replaced (such a policy is looked at at every command)", async () => {
    const { secret, look } = setup({ secretVia: "symlink" });
    writeFileSync(secret, "a");
    const first = look();
    rmSync(secret);
    writeFileSync(secret, "b");
    // Unwatched, a look is shared by the calls of one turn of the event loop (a burst): the next turn looks again.
    await new Promise((resolve) => setImmediate(resolve));
    expect(look()).not.toBe(first);
  });

  test("a repository made in a subfolder (its hooks held read-only), and .git moved aside and made anew: each seen", () => {
    const { workspace, look } = setup();
    const before = look();
    mkdirSync(join(workspace, "sub", ".git", "hooks"), { recursive: true });
    writeFileSync(join(workspace, "sub", ".git", "HEAD"), "ref: refs/heads/main\n");
    const nested = look();
    expect(nested).not.toBe(before);
    expect(nested).toContain(join(workspace, "sub", ".git", "hooks"));
    // .git/config is writable (what it would run is disarmed instead): not part of the look.
    writeFileSync(join(workspace, "sub", ".git", "config.lock"), "[core]\n");
    renameSync(join(workspace, "sub", ".git", "config.lock"), join(workspace, "sub", ".git", "config"));
    const configured = look();
    expect(configured).not.toContain(join(workspace, "sub", ".git", "config="));
    renameSync(join(workspace, ".git"), join(workspace, "old-git"));
    mkdirSync(join(workspace, ".git"));
    expect(look()).not.toBe(configured);
  });

  test("a writable root removed and made again: a new signature", () => {
    const { workspace, look } = setup();
    const before = look();
    rmSync(workspace, { recursive: true });
    mkdirSync(workspace);
    expect(look()).not.toBe(before);
  });

  test("files and deeper folders the look does not depend on leave it as it was", () => {
    const { workspace, look } = setup();
    mkdirSync(join(workspace, "src"));
    const before = look();
    writeFileSync(join(workspace, "notes.txt"), "x");
    mkdirSync(join(workspace, "src", "deeper"));
    writeFileSync(join(workspace, ".git", "index"), "x");
    expect(look()).toBe(before);
  });
});

describe("EntryWatch", () => {
  test("sees a watched name made, renamed onto and removed, a folder made where folders count, and the folder itself going; not other names", () => {
    const dir = join(scratch, "watch");
    mkdirSync(join(dir, "inner"), { recursive: true });
    const fresh = () => EntryWatch.of([{ dir, names: ["wanted"] }, { dir: join(dir, "inner"), folders: true }])!;
    let watch = fresh();
    writeFileSync(join(dir, "other"), "x");
    writeFileSync(join(dir, "inner", "file"), "x");
    expect(watch.changed()).toBe(false);
    writeFileSync(join(dir, "wanted"), "x");
    expect(watch.changed()).toBe(true);
    expect(watch.changed()).toBe(true); // once changed, always
    watch.close();
    watch = fresh();
    renameSync(join(dir, "other"), join(dir, "wanted"));
    expect(watch.changed()).toBe(true);
    watch.close();
    watch = fresh();
    mkdirSync(join(dir, "inner", "folder"));
    expect(watch.changed()).toBe(true);
    watch.close();
    watch = fresh();
    rmSync(join(dir, "inner"), { recursive: true });
    expect(watch.changed()).toBe(true);
    watch.close();
  });

  test("sees a mount appear (a tmpfs on a folder of this test's own)", () => {
    const dir = join(scratch, "mounted");
    mkdirSync(dir);
    const watch = EntryWatch.of([{ dir: scratch, names: ["unrelated"] }])!;
    expect(watch.changed()).toBe(false);
    const mount = Bun.spawnSync(["mount", "-t", "tmpfs", "none", dir]);
    if (mount.exitCode !== 0) throw new Error(`this test needs root to mount a tmpfs: ${mount.stderr.toString()}`);
    try {
      expect(watch.changed()).toBe(true);
    } finally {
      Bun.spawnSync(["umount", dir]);
      watch.close();
    }
  });

  test("a folder that is not there cannot be watched: null, and the look is made every time", () => {
    expect(EntryWatch.of([{ dir: join(scratch, "missing"), names: ["x"] }])).toBeNull();
  });
});
