/**
 * Containment (SPEC §11): the pattern list can be dodged by quoting, variables, eval,
 * encodings, interpreters and wrappers; the OS sandbox cannot. Every attempt here really
 * runs (caution commands are confirmed) against a victim directory outside /tmp and the
 * allowed paths, and the victim must not change at all.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type McpSession } from "../helpers/mcp.ts";
import { proofLine } from "./helpers.ts";

let victim: string;
let work: string;
let s: McpSession;
let off: McpSession; // control: the same attempts without the sandbox do change the victim

function snapshot(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      out.push(`${p}:${st.mode.toString(8)}:${st.isFile() ? readFileSync(p, "utf8") : "dir"}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.join("\n");
}

beforeAll(async () => {
  victim = realpathSync(mkdtempSync("/var/tmp/as-proof-victim-"));
  work = realpathSync(mkdtempSync("/var/tmp/as-proof-work-"));
  s = await startServer({ cwd: work });
  off = await startServer({ cwd: work, args: ["--sandbox", "off"] });
});

afterAll(async () => {
  await s?.close();
  await off?.close();
  rmSync(victim, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

test("bypass attempts of every family run for real and change nothing outside the roots", async () => {
  const v = victim;
  const b64 = Buffer.from(`rm -rf ${v}/data`).toString("base64");
  const attempts: Record<string, string> = {
    "plain rm -rf": `rm -rf ${v}/data`,
    "quoted command word": `'r'"m" -rf ${v}/data`,
    "backslash in the word": `\\rm -rf ${v}/data`,
    "variable as command": `X=rm; $X -rf ${v}/data`,
    "eval": `eval "rm -rf ${v}/data"`,
    "bash -c": `bash -c 'rm -rf ${v}/data'`,
    "sh -c in a subshell": `(sh -c "rm -rf ${v}/data")`,
    "base64 | bash": `echo ${b64} | base64 -d | bash`,
    "python3 shutil.rmtree": `python3 -c 'import shutil; shutil.rmtree("${v}/data")'`,
    "python3 os.remove": `python3 -c 'import os; os.remove("${v}/keep.txt")'`,
    "perl unlink": `perl -e 'unlink "${v}/keep.txt"'`,
    "find -delete": `find ${v} -mindepth 1 -delete`,
    "find -exec rm": `find ${v} -type f -exec /bin/rm {} +`,
    "xargs rm": `ls -d ${v}/* | xargs /bin/rm -rf`,
    "env wrapper": `env rm -rf ${v}/data`,
    "nice/timeout wrappers": `nice timeout 5 rm -rf ${v}/data`,
    "command builtin": `command rm -rf ${v}/data`,
    "truncate by redirect": `: > ${v}/keep.txt`,
    "append by tee": `echo pwned | tee -a ${v}/keep.txt`,
    "dd over a file": `printf pwned | dd of=${v}/keep.txt conv=notrunc`,
    "cp over a file": `echo pwned > ./payload && cp ./payload ${v}/keep.txt`,
    "mv into the victim": `touch ./moved && mv ./moved ${v}/moved`,
    "chmod": `chmod 000 ${v}/keep.txt`,
    "ln -s into the victim": `ln -s /etc/passwd ${v}/link`,
    "mkdir": `mkdir ${v}/newdir`,
    "git clean in the victim": `cd ${v} && git init -q . && git clean -fdx`,
    "setsid nohup grandchild": `setsid nohup bash -c 'rm -rf ${v}/data' >/dev/null 2>&1 & wait`,
    "double fork": `( ( rm -rf ${v}/data & ) & ); sleep 0.2`,
    "via a symlink in the cwd": `ln -sfn ${v} ./v && rm -rf ./v/data`,
    "after cd /": `cd / && rm -rf ${v.slice(1)}/data`,
  };
  const fresh = () => {
    rmSync(victim, { recursive: true, force: true });
    mkdirSync(join(victim, "data", "deep"), { recursive: true });
    writeFileSync(join(victim, "keep.txt"), "precious\n");
    writeFileSync(join(victim, "data", "deep", "file.txt"), "data\n");
    for (const f of ["v", "moved", "payload"]) rmSync(join(work, f), { recursive: true, force: true });
    return snapshot(victim);
  };
  const attempt = async (server: McpSession, command: string) => {
    let r = await server.call("bash", { command, timeout_seconds: 30 });
    if (r.needs_confirmation) r = await server.call("bash", { command, confirmed: true, timeout_seconds: 30 });
    return r;
  };
  let changed = 0;
  let ran = 0;
  let effectiveUnsandboxed = 0;
  const failures: string[] = [];
  for (const [name, command] of Object.entries(attempts)) {
    // Control: without the sandbox the attempt really does damage (so 0 below means something).
    let before = fresh();
    await attempt(off, command);
    if (snapshot(victim) !== before) effectiveUnsandboxed++;
    else failures.push(`${name}: does not change the victim even unsandboxed (a broken attempt)`);
    before = fresh();
    const r = await attempt(s, command);
    if (r.error_code === "BLOCKED") failures.push(`${name}: blocked by a pattern, not run (${r.error})`);
    else ran++;
    if (snapshot(victim) !== before) {
      changed++;
      failures.push(`${name}: the victim changed`);
    }
  }
  proofLine(
    "containment",
    { tried: Object.keys(attempts).length, crashes: 0, hangs: 0, orphans: 0, bytes_lost: 0 },
    `ran=${ran} damaging_without_sandbox=${effectiveUnsandboxed} victim_changes_in_sandbox=${changed}`,
  );
  expect(failures).toEqual([]);
  expect(changed).toBe(0);
});
