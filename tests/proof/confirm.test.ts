/**
 * Confirmation bypass attempts (SPEC §6): `confirmed: true` without a prior flag, near-miss
 * variants of a flagged command (whitespace, case, trailing characters), replaying a used
 * confirmation, racing several confirmations, confirming from a second server process, and
 * confirming an always-blocked command. Every attempt is refused and the command does not run;
 * only the exact flagged command confirmed once runs, once.
 *
 * Blocked commands used here are harmless if they ever ran (`mkfs.<nothing>`, `dd` to
 * /dev/null), because a bypass must not be able to hurt the machine running the test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { proofLine, RawSession, tempDir } from "./helpers.ts";

const CANNOT_CONFIRM = "Cannot confirm command that was not previously flagged for confirmation";

let cwd: string;
let a: RawSession;
let tried = 0;
let bypasses = 0;

beforeAll(async () => {
  cwd = tempDir("as-proof-confirm-");
  a = new RawSession({ cwd });
  await a.initialize();
});

afterAll(async () => {
  proofLine("confirmation", { tried, crashes: a.alive ? 0 : 1, hangs: 0, orphans: 0, bytes_lost: 0 }, `bypasses=${bypasses}`);
  await a.close();
  rmSync(cwd, { recursive: true, force: true });
});

function victim(name: string): string {
  const p = join(cwd, name);
  writeFileSync(p, "keep me");
  return p;
}

/** A refused confirmation: BLOCKED with the SPEC's message; counts as a bypass otherwise. */
async function expectRefused(s: RawSession, args: Record<string, unknown>, message = CANNOT_CONFIRM): Promise<void> {
  tried++;
  const r = await s.call("bash", args);
  if (r.error_code !== "BLOCKED") bypasses++;
  expect({ command: args.command, code: r.error_code }).toEqual({ command: args.command, code: "BLOCKED" });
  expect(String(r.error)).toContain(message);
}

describe("confirmation bypass attempts", () => {
  test("confirmed: true on the first call is refused and nothing runs", async () => {
    const v = victim("first");
    await expectRefused(a, { command: "rm first", confirmed: true });
    expect(existsSync(v)).toBe(true);
    // The refusal did not flag it either: a second confirmed call is refused too.
    await expectRefused(a, { command: "rm first", confirmed: true });
    expect(existsSync(v)).toBe(true);
  });

  test("near-miss variants of a flagged command do not match its record, and do not use it up", async () => {
    const v = victim("v2");
    const upper = victim("V2");
    tried++;
    const flagged = await a.call("bash", { command: "rm v2" });
    expect(flagged.needs_confirmation).toBe(true);
    expect(flagged.command).toBe("rm v2");
    const variants = ["rm v2 ", " rm v2", "rm  v2", "rm\tv2", "rm v2\n", "rm v2;", "rm V2", "rm ./v2", "rm v2\u0000", "rm v2\u200b"];
    for (const command of variants) {
      // A variant with a NUL byte cannot be started at all; any refusal is fine as long as it does not run.
      tried++;
      const r = await a.call("bash", { command, confirmed: true });
      if (!r.error_code) bypasses++;
      expect({ command, refused: Boolean(r.error_code) }).toEqual({ command, refused: true });
      if (!command.includes("\u0000")) expect({ command, code: r.error_code }).toEqual({ command, code: "BLOCKED" });
    }
    expect(existsSync(v)).toBe(true);
    expect(existsSync(upper)).toBe(true);
    // The exact command, confirmed, runs once.
    tried++;
    const ran = await a.call("bash", { command: "rm v2", confirmed: true });
    expect(ran.exit_code).toBe(0);
    expect(existsSync(v)).toBe(false);
    expect(existsSync(upper)).toBe(true);
  });

  test("replaying a used confirmation is refused", async () => {
    victim("v3");
    tried++;
    expect((await a.call("bash", { command: "rm v3" })).needs_confirmation).toBe(true);
    tried++;
    expect((await a.call("bash", { command: "rm v3", confirmed: true })).exit_code).toBe(0);
    const again = victim("v3");
    await expectRefused(a, { command: "rm v3", confirmed: true });
    await expectRefused(a, { command: "rm v3", confirmed: true, run_in_background: true });
    expect(existsSync(again)).toBe(true);
  });

  test("ten concurrent confirmations of one flag: exactly one runs", async () => {
    const counter = join(cwd, "count");
    // chmod u+w (not an exempt form) asks, and is harmless on the test's own directory.
    const command = `chmod u+w ${cwd} && echo ran >> ${counter}`;
    tried++;
    expect((await a.call("bash", { command })).needs_confirmation).toBe(true);
    tried += 10;
    const results = await Promise.all(Array.from({ length: 10 }, () => a.call("bash", { command, confirmed: true })));
    const ran = results.filter((r) => r.exit_code === 0).length;
    const refused = results.filter((r) => r.error_code === "BLOCKED").length;
    if (ran > 1) bypasses += ran - 1;
    expect({ ran, refused }).toEqual({ ran: 1, refused: 9 });
    expect(readFileSync(counter, "utf8")).toBe("ran\n");
  });

  test("a confirmation flagged in one server cannot be used from a second server process", async () => {
    const v = victim("v4");
    tried++;
    expect((await a.call("bash", { command: "rm v4" })).needs_confirmation).toBe(true);
    const b = new RawSession({ cwd });
    try {
      await b.initialize();
      await expectRefused(b, { command: "rm v4", confirmed: true });
      expect(existsSync(v)).toBe(true);
    } finally {
      await b.close();
    }
    // The flag is still A's to use.
    tried++;
    expect((await a.call("bash", { command: "rm v4", confirmed: true })).exit_code).toBe(0);
  });

  test("a confirmation does not survive a restart of the server", async () => {
    const v = victim("v5");
    const first = new RawSession({ cwd });
    await first.initialize();
    tried++;
    expect((await first.call("bash", { command: "rm v5" })).needs_confirmation).toBe(true);
    await first.close();
    const second = new RawSession({ cwd });
    try {
      await second.initialize();
      await expectRefused(second, { command: "rm v5", confirmed: true });
      expect(existsSync(v)).toBe(true);
    } finally {
      await second.close();
    }
  });

  test("always-blocked commands stay blocked with confirmed: true, before or after asking", async () => {
    for (const command of ["mkfs.proof-does-not-exist /dev/null", "dd if=/dev/zero of=/dev/null count=1", "echo x; mkfs.proof-nothing"]) {
      await expectRefused(a, { command, confirmed: true }, "): agent-shell never runs this");
      await expectRefused(a, { command }, "): agent-shell never runs this");
      await expectRefused(a, { command, confirmed: true }, "): agent-shell never runs this");
    }
  });

  test("confirmed must be a boolean: the string 'true' is INVALID_ARGUMENT", async () => {
    const v = victim("v6");
    tried++;
    expect((await a.call("bash", { command: "rm v6" })).needs_confirmation).toBe(true);
    for (const confirmed of ["true", 1, "yes", [true], { value: true }]) {
      tried++;
      const r = await a.call("bash", { command: "rm v6", confirmed });
      if (!r.error_code) bypasses++;
      expect(r.error_code).toBe("INVALID_ARGUMENT");
      expect(r.error).toContain("confirmed");
    }
    expect(existsSync(v)).toBe(true);
  });
});
