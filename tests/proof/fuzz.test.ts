/**
 * Protocol fuzz: thousands of generated lines written raw to `agent-shell mcp`'s stdin.
 * Malformed JSON, wrong JSON-RPC shapes, huge strings, a wrong type for every parameter of
 * every tool (derived from tools/list), unicode and NUL bytes in commands, ids of every kind.
 * The server must never crash, answer every well-formed request exactly once within a
 * bound with a result or a clear error, and leave no process behind.
 * Reproduce a run with PROOF_SEED=<printed seed>; PROOF_HEAVY=1 for 20,000 requests.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { HEAVY, proofLine, proofSeed, RawSession, type RawResponse, Rng, waitNoEnvProcess } from "./helpers.ts";

const COUNT = Number(process.env.PROOF_FUZZ_COUNT ?? (HEAVY ? 20_000 : 2_000));
const WINDOW = 16; // well-formed requests in flight at once
const ANSWER_MS = 30_000; // the bound on every answer
const ERROR_CODES = new Set(["NOT_FOUND", "ACCESS_DENIED", "INVALID_ARGUMENT", "IO_ERROR", "TIMEOUT", "BLOCKED"]);
const MB = 1024 * 1024;

const seed = proofSeed();
const rng = new Rng(seed);
const MARK = "AGENT_SHELL_PROOF_FUZZ";
const markValue = `${seed}-${process.pid}`;

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

// ---------------------------------------------------------------------------------------
// generators

const UNICODE = ["é", "漢字", "🙂", "\u202e", "\u0301", "\ufeff", "\ud800", "\udfff", "\u2028", "\t", "\r", "\\", "'", '"', "$(x)", "`x`", "\u0000", "\u0007", "\x1b[31m"];

function unicodeText(max = 40): string {
  let s = "";
  const n = rng.int(0, max);
  for (let i = 0; i < n; i++) s += rng.chance(0.5) ? rng.pick(UNICODE) : String.fromCharCode(rng.int(0x20, 0x7e));
  return s;
}

/** A few MB of text (sometimes multi-byte). */
function hugeString(): string {
  const size = rng.int(1, 3) * MB;
  return (rng.chance(0.5) ? "x" : "é").repeat(rng.chance(0.5) ? size : size / 2);
}

/** Single-quoted for bash; NUL bytes are left in on purpose. */
function shellQuote(s: string): string {
  return "'" + s.replaceAll("'", "'\\''") + "'";
}

/** A value whose JSON type differs from `schema`'s. */
function wrongValue(schema: Schema): unknown {
  const candidates: unknown[] = [];
  const t = schema.type;
  if (t !== "string") candidates.push("not-a-" + t, "", unicodeText(10));
  if (t !== "integer" && t !== "number") candidates.push(7, -1, 0.5, 1e308, -0);
  if (t === "integer") candidates.push(1.5, -5, 2 ** 60, Number.MAX_SAFE_INTEGER + 2);
  // Below the schema's minimum (a number that may be 0, e.g. a delay, takes 0 rightly).
  if (t === "number") candidates.push(...[-1, 0].filter((v) => schema.minimum === undefined || v < schema.minimum));
  if (t !== "boolean") candidates.push(true, false);
  if (t !== "object") candidates.push({ nested: { deep: [1, 2] } }, {});
  if (t !== "array") candidates.push([], ["a", 1, null]);
  if (t === "object") candidates.push({ k: 1 }, { k: null }, { k: ["v"] });
  if (t === "array") candidates.push([1, 2], [""], [null]);
  if (schema.enum) candidates.push("ALL", "any ", "stdout\u0000", "");
  if (t === "string" && schema.enum === undefined && (schema as any).minLength) candidates.push("");
  candidates.push(null);
  return rng.pick(candidates);
}

function validArgs(tool: string): Record<string, unknown> {
  switch (tool) {
    case "bash": {
      const text = unicodeText();
      const forms = [
        () => ({ command: `printf %s ${shellQuote(text.replaceAll("\u0000", ""))}`, timeout_seconds: 10 }),
        () => ({ command: `echo ${shellQuote(text)}` }), // may carry NUL bytes
        () => ({ command: "true", description: unicodeText(), working_directory: "." }),
        () => ({ command: "exit 3", timeout_seconds: 5 }),
        () => ({ command: `sleep 0.0${rng.int(1, 9)}; echo done`, run_in_background: true }),
        () => ({ command: "cat", stdin: text }),
        () => ({ command: "env | grep -c PROOF_FUZZ_VAR || true", env: { PROOF_FUZZ_VAR: text } }),
        () => ({ command: "wc -c", stdin: hugeString() }),
        () => ({ command: "true", description: hugeString() }),
        () => ({ command: "echo " + "y".repeat(rng.int(1, 3) * MB) }),
        () => ({ command: `printf '%s\\n' ${shellQuote(text)}`, run_in_background: true, notify_pattern: ".", name: "fuzz-" + rng.int(1, 3) }),
      ];
      return rng.pick(forms)();
    }
    case "task":
      return { prompt: unicodeText() || "p", background: rng.chance(0.5), timeout_seconds: 10 };
    case "task_output": {
      const id = rng.chance(0.7) ? `bg-${rng.int(1, 60)}` : unicodeText(8) || "x";
      return rng.pick([
        { task_id: id },
        { task_id: id, wait: true, timeout: rng.int(0, 2) },
        { task_ids: [id, `bg-${rng.int(1, 60)}`], until: rng.pick(["any", "all"]), wait: rng.chance(0.5), timeout: 1 },
        { task_id: id, offset: rng.int(0, 100), length: rng.int(0, 100), stream: rng.pick(["stdout", "stderr"]) },
        { task_id: id, tail_lines: rng.int(0, 5), filter: rng.pick(["o", "[", "(unclosed", "^d", "\\d+"]), only_new: rng.chance(0.5), max_bytes: rng.int(1, 1000) },
      ]);
    }
    case "kill_shell":
      return { task_id: rng.chance(0.7) ? `bg-${rng.int(1, 60)}` : unicodeText(8) || "x" };
    case "task_list":
      return rng.chance(0.5) ? {} : { status: rng.pick(["running", "finished", "all"]) };
    default:
      return {};
  }
}

type Expect = "answer" | "none";
interface Case {
  kind: string;
  /** Bytes to write (one line, newline included). */
  line: string | Uint8Array;
  /** The id key to wait for when an answer is required. */
  key?: string;
  expect: Expect;
  check?: (r: RawResponse) => string | null; // null = fine, else a reason
}

const usedKeys = new Set<string>();
function freshId(): { id: string | number; key: string } {
  for (;;) {
    const id = rng.pick([
      () => rng.int(1, 2 ** 31),
      () => -rng.int(1, 1e6),
      () => 0,
      () => Number.MAX_SAFE_INTEGER - rng.int(0, 1e6),
      () => "s-" + rng.int(0, 1e9),
      () => "",
      () => unicodeText(12).replaceAll("\ud800", "").replaceAll("\udfff", ""),
      () => "long-" + "i".repeat(rng.int(1000, 20000)) + rng.int(0, 1e9),
    ])();
    const key = JSON.stringify(id);
    if (!usedKeys.has(key)) {
      usedKeys.add(key);
      return { id, key };
    }
  }
}

function rpc(id: unknown, method: string, params?: unknown): string {
  return JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }) + "\n";
}

/** A tools/call answer must be a result with the SPEC's shape: structured, and an error exactly when isError. */
function checkToolResult(r: RawResponse, wantError?: { code: string; field?: string }): string | null {
  if (r.error) return typeof r.error.message === "string" && r.error.message ? null : "JSON-RPC error without a message";
  const res = r.result;
  if (!res || !Array.isArray(res.content) || typeof res.content[0]?.text !== "string") return "result without content text";
  const sc = res.structuredContent;
  if (!sc || typeof sc !== "object") return "result without structuredContent";
  if (JSON.stringify(JSON.parse(res.content[0].text)) !== JSON.stringify(sc)) return "content text differs from structuredContent";
  const isErr = typeof sc.error === "string";
  if (isErr !== (res.isError === true)) return `isError=${res.isError} but error=${sc.error}`;
  if (isErr) {
    if (!ERROR_CODES.has(sc.error_code)) return `unknown error_code ${sc.error_code}`;
    if (!sc.error) return "empty error message";
  }
  if (wantError) {
    if (!isErr) return `expected ${wantError.code}, got a success`;
    if (sc.error_code !== wantError.code) return `expected ${wantError.code}, got ${sc.error_code}: ${String(sc.error).slice(0, 200)}`;
    if (wantError.field && !String(sc.error).includes(wantError.field)) return `error does not name field '${wantError.field}': ${String(sc.error).slice(0, 200)}`;
  }
  return null;
}

function checkRpcError(r: RawResponse): string | null {
  if (!r.error) return "expected a JSON-RPC error";
  return typeof r.error.code === "number" && typeof r.error.message === "string" && r.error.message ? null : "malformed JSON-RPC error";
}

function genCase(tools: Map<string, Schema>): Case {
  const names = [...tools.keys()];
  const roll = rng.next();
  // 1. malformed JSON: never answered (no id can be read), must not hurt
  if (roll < 0.12) {
    const junk = rng.pick([
      () => "{",
      () => "}}}",
      () => '{"jsonrpc":"2.0","id":1,"method":"tools/list"',
      () => "not json at all " + unicodeText(),
      () => "[" + "[".repeat(rng.int(1, 5000)),
      () => '{"a":' + "1".repeat(rng.int(1, 1000)),
      () => new Uint8Array(Array.from({ length: rng.int(1, 200) }, () => rng.pick([0, 0xff, 0xfe, 0xc0, 0x80, rng.int(0, 255)])).filter((b) => b !== 10)),
      () => "\u0000\u0000\u0000",
      () => '"just a string"',
      () => "12345",
      () => "null",
      () => "x".repeat(rng.int(1, 3) * MB),
    ])();
    const line = typeof junk === "string" ? junk + "\n" : new Uint8Array([...junk, 10]);
    return { kind: "malformed-json", line, expect: "none" };
  }
  // 2. wrong JSON-RPC shapes: not requests, so no answer is owed; the server must survive
  if (roll < 0.2) {
    const { id } = freshId();
    const shape = rng.pick([
      () => ({ id, method: "tools/list" }),
      () => ({ jsonrpc: "1.0", id, method: "tools/list" }),
      () => ({ jsonrpc: 2, id, method: "tools/list" }),
      () => ({ jsonrpc: "2.0", id }),
      () => ({ jsonrpc: "2.0", id, method: 42 }),
      () => ({ jsonrpc: "2.0", id, method: null }),
      () => ({ jsonrpc: "2.0", id, result: {} }),
      () => ({ jsonrpc: "2.0", id, error: { code: 1, message: "x" } }),
      () => ({ jsonrpc: "2.0", id, method: "tools/call", params: "string params" }),
      () => ({ jsonrpc: "2.0", id, method: "tools/call", params: [1, 2] }),
      () => [{ jsonrpc: "2.0", id, method: "ping" }],
      () => ({}),
    ])();
    return { kind: "bad-shape", line: JSON.stringify(shape) + "\n", expect: "none" };
  }
  // 3. ids of invalid kinds on otherwise good requests: no answer owed
  if (roll < 0.25) {
    // MCP (and JSON-RPC's SHOULD) allow only strings and integers: fractional ids are not requests either.
    const id = rng.pick([null, { a: 1 }, [1], true, false, { id: 1 }, rng.int(1, 1e6) + 0.5]);
    return { kind: "invalid-id", line: rpc(id, rng.pick(["ping", "tools/list"])), expect: "none" };
  }
  // 4. notifications (no id): never answered
  if (roll < 0.3) {
    const n = rng.pick([
      () => ({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: rng.int(0, 1e9), reason: unicodeText() } }),
      () => ({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: { x: 1 } } }),
      () => ({ jsonrpc: "2.0", method: "notifications/" + unicodeText(8) }),
      () => ({ jsonrpc: "2.0", method: "notifications/initialized" }),
      () => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: "x" } }),
    ])();
    return { kind: "notification", line: JSON.stringify(n) + "\n", expect: "none" };
  }
  // 5. well-formed requests: exactly one answer each
  const { id, key } = freshId();
  const r = rng.next();
  if (r < 0.08) {
    const method = rng.pick(["ping", "tools/list", "resources/list", "prompts/list", "logging/setLevel", "completion/complete", "no/such/method", unicodeText(6) || "m"]);
    const params = method === "logging/setLevel" ? { level: rng.pick(["debug", "info", "bogus"]) } : undefined;
    return { kind: "method", line: rpc(id, method, params), key, expect: "answer", check: (x) => (x.result !== undefined || x.error ? null : "empty answer") };
  }
  if (r < 0.12) {
    // unknown tool names, missing/extra call params
    const params = rng.pick([
      { name: "no_such_tool", arguments: {} },
      { name: unicodeText(6) || "t", arguments: {} },
      { name: "bash" },
      { arguments: { command: "true" } },
      { name: "bash", arguments: "command" },
      { name: "bash", arguments: null },
      { name: "bash", arguments: [] },
      { name: 5, arguments: {} },
    ]);
    return {
      kind: "call-shape",
      line: rpc(id, "tools/call", params),
      key,
      expect: "answer",
      check: (x) => (x.error ? checkRpcError(x) : checkToolResult(x)),
    };
  }
  const tool = rng.pick(names);
  const schema = tools.get(tool)!;
  const props = Object.keys(schema.properties ?? {});
  if (r < 0.55 && props.length) {
    // a wrong type for one parameter of this tool; every other argument valid
    const field = rng.pick(props);
    const args: Record<string, unknown> = validArgs(tool);
    for (const req of schema.required ?? []) if (args[req] === undefined) args[req] = req === "command" ? "true" : "x";
    args[field] = wrongValue(schema.properties![field]!);
    if (tool === "task_output" && field !== "task_id" && field !== "task_ids" && args.task_id === undefined && args.task_ids === undefined) args.task_id = "bg-1";
    return {
      kind: `wrong-type:${tool}.${field}`,
      line: rpc(id, "tools/call", { name: tool, arguments: args }),
      key,
      expect: "answer",
      check: (x) => checkWrongType(x, tool, field, args[field], schema.properties![field]!),
    };
  }
  if (r < 0.62) {
    const args: Record<string, unknown> = validArgs(tool);
    if (rng.chance(0.5)) {
      const req = schema.required?.[0];
      if (req) delete args[req];
    } else {
      args["unknown_" + rng.int(0, 9)] = rng.pick([1, "x", null]);
    }
    return { kind: `missing-or-extra:${tool}`, line: rpc(id, "tools/call", { name: tool, arguments: args }), key, expect: "answer", check: (x) => checkToolResult(x) };
  }
  const args = validArgs(tool);
  return {
    kind: `valid:${tool}`,
    line: rpc(id, "tools/call", { name: tool, arguments: args }),
    key,
    expect: "answer",
    check: (x) => checkToolResult(x) ?? (tool === "bash" ? checkBytes(x, args) : null),
  };
}

/** Bytes that went missing or changed in the fuzz's byte-checked commands (printf, cat, wc -c of stdin). */
let bytesLost = 0;
// Lone surrogates become U+FFFD; a leading BOM must be kept (TextDecoder drops it by default).
const utf8 = (t: string) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(new TextEncoder().encode(t));

/** For commands whose output is known from their arguments, every byte must come back. */
function checkBytes(x: RawResponse, args: Record<string, unknown>): string | null {
  const sc = x.result?.structuredContent;
  if (!sc || sc.error || sc.exit_code !== 0) return null; // errors are judged by checkToolResult
  const command = String(args.command);
  let want: string | null = null;
  if (command === "wc -c") want = `${Buffer.byteLength(utf8(String(args.stdin)))}\n`;
  else if (command === "cat") want = utf8(String(args.stdin));
  else if (/^printf %s '/.test(command) && args.run_in_background !== true) {
    want = utf8(command.slice("printf %s ".length).slice(1, -1).replaceAll("'\\''", "'"));
  }
  // SPEC §15: byte for byte when it fits the budget (8,000 bytes) and holds no terminal control (ESC, backspace, a lone CR); else shaped.
  // eslint-disable-next-line no-control-regex
  if (want !== null && (Buffer.byteLength(want) > 8000 || /[\x1b\x08]|\r(?!\n)/.test(want))) want = null;
  if (want === null || sc.stdout === want) return null;
  bytesLost += Math.abs(Buffer.byteLength(want) - Buffer.byteLength(String(sc.stdout))) || 1;
  return `output differs: want ${JSON.stringify(want).slice(0, 80)}, got ${JSON.stringify(sc.stdout).slice(0, 80)}`;
}

/** A value the field's schema still accepts (e.g. "" for a free-text string) need not fail; anything else must. */
function checkWrongType(x: RawResponse, tool: string, field: string, value: unknown, schema: Schema & { minLength?: number }): string | null {
  const generic = checkToolResult(x);
  if (generic) return generic;
  const sc = x.result?.structuredContent;
  const schemaOk = typeof value === "string" && schema.type === "string" && schema.enum === undefined && !(schema.minLength && value.length < schema.minLength);
  if (sc?.error_code === "INVALID_ARGUMENT") {
    return String(sc.error).includes(field) || String(sc.error).includes("(arguments)") || !String(sc.error).startsWith("Invalid arguments") ? null : `INVALID_ARGUMENT does not name '${field}': ${sc.error}`;
  }
  if (sc && typeof sc.error !== "string" && !schemaOk) return `${tool}.${field}=${JSON.stringify(value)?.slice(0, 60)} was accepted`;
  return null;
}

// ---------------------------------------------------------------------------------------

describe("protocol fuzz", () => {
  let session: RawSession | undefined;
  afterAll(async () => {
    if (session?.alive) await session.close();
    session?.cleanup();
  });

  test(
    `${COUNT} generated requests: no crash, no hang, one clear answer each, no process left`,
    async () => {
      session = new RawSession({
        env: { [MARK]: markValue },
        args: ["--agent-command", '["printf","%s","{prompt}"]', "--timeout", "20"],
      });
      const s = session;
      await s.initialize();
      const listed = await s.request(s.id(), "tools/list");
      const tools = new Map<string, Schema>((listed!.result.tools as any[]).map((t) => [t.name, t.inputSchema as Schema]));
      expect([...tools.keys()]).toContain("bash");

      const counts: Record<string, number> = {};
      const problems: string[] = [];
      let hangs = 0;
      let answered = 0;
      let owed = 0;
      const inFlight = new Set<Promise<void>>();
      for (let i = 0; i < COUNT; i++) {
        const c = genCase(tools);
        const family = c.kind.split(":")[0]!;
        counts[family] = (counts[family] ?? 0) + 1;
        if (c.expect === "none") {
          s.write(c.line);
          continue;
        }
        owed++;
        const p = s.expect(c.key!, c.line, ANSWER_MS).then((resp) => {
          if (resp === null) {
            hangs++;
            problems.push(`#${i} ${c.kind}: no answer within ${ANSWER_MS} ms: ${(typeof c.line === "string" ? c.line : "<bytes>").slice(0, 300)}`);
            return;
          }
          answered++;
          const why = c.check?.(resp);
          if (why) problems.push(`#${i} ${c.kind}: ${why}`);
        });
        inFlight.add(p);
        p.finally(() => inFlight.delete(p));
        if (inFlight.size >= WINDOW) await Promise.race(inFlight);
        if (!s.alive) break;
      }
      await Promise.all(inFlight);

      // Still serving after all that: a ping and a real command answer normally.
      const ping = await s.request(s.id(), "ping", undefined, 10_000);
      const echo = await s.call("bash", { command: "echo still-alive" }, 20_000).catch((e) => ({ error: String(e) }));
      const crashed = !s.alive || ping === null;
      const duplicates = s.unmatched.filter((m) => m && typeof m === "object" && "id" in m && usedKeys.has(JSON.stringify(m.id)));
      // Answers to lines that were not requests (invalid ids, bad shapes): reported, not required either way.
      const invalidIdAnswers = s.unmatched.length - duplicates.length;

      const code = await s.close(15_000);
      const left = await waitNoEnvProcess(MARK, markValue, 5000);
      proofLine(
        "fuzz",
        { tried: COUNT, crashes: crashed ? 1 : 0, hangs, orphans: left.length, bytes_lost: bytesLost },
        `seed=${seed} owed=${owed} answered=${answered} problems=${problems.length} answers_to_non_requests=${invalidIdAnswers} junk_stdout=${s.junk.length} families=${JSON.stringify(counts)}`,
      );
      if (problems.length) console.log("first problems:\n  " + problems.slice(0, 25).join("\n  "));
      expect(crashed).toBe(false);
      expect(echo.stdout).toBe("still-alive\n");
      expect(hangs).toBe(0);
      expect(answered).toBe(owed);
      expect(duplicates).toEqual([]);
      expect(s.junk).toEqual([]);
      expect(problems).toEqual([]);
      expect(bytesLost).toBe(0);
      expect(code).toBe(0);
      expect(left).toEqual([]);
    },
    HEAVY ? 900_000 : 120_000,
  );
});

describe("targeted inputs the generator only hits by chance", () => {
  test("a NUL byte in command, working_directory, env or description → INVALID_ARGUMENT naming the field", async () => {
    const s = new RawSession();
    try {
      await s.initialize();
      const cases: Array<[string, Record<string, unknown>]> = [
        ["command", { command: "echo a\u0000b" }],
        ["working_directory", { command: "true", working_directory: "sub\u0000dir" }],
        ["env", { command: "true", env: { A: "x\u0000y" } }],
        ["env", { command: "true", env: { "A\u0000B": "x" } }],
      ];
      const seen: string[] = [];
      for (const [field, args] of cases) {
        const r = await s.call("bash", args, 20_000);
        seen.push(`${field}: ${r.error_code}${String(r.error).includes(field) ? "" : " (field not named)"}`);
      }
      const wrong = seen.filter((x, i) => x !== `${cases[i]![0]}: INVALID_ARGUMENT`);
      proofLine("nul-bytes", { tried: cases.length + 1, crashes: s.alive ? 0 : 1, hangs: 0, orphans: 0, bytes_lost: 0 }, `not_invalid_argument=${wrong.length} (${seen.join("; ")})`);
      expect(seen).toEqual(cases.map(([field]) => `${field}: INVALID_ARGUMENT`));
      // description is only echoed: NUL is fine there, the command runs
      const ok = await s.call("bash", { command: "echo ok", description: "a\u0000b" });
      expect(ok.stdout).toBe("ok\n");
      expect(ok.description).toBe("a\u0000b");
    } finally {
      await s.close();
    }
  }, 60_000);

  test("a catastrophic-backtracking filter regex does not stall the server", async () => {
    const s = new RawSession();
    try {
      await s.initialize();
      const bg = await s.call("bash", { command: "for i in $(seq 1 ${PROOF_LINES:-30}); do printf 'a%.0s' $(seq 1 40); echo '!'; done", run_in_background: true });
      await s.call("task_output", { task_id: bg.task_id, wait: true, timeout: 10 });
      // The filter request may take as long as it likes; other requests must still be answered.
      // (agent-shell refuses the nested-quantifier shape up front; either way other requests must be answered)
      const slow = s.request(s.id(), "tools/call", { name: "task_output", arguments: { task_id: bg.task_id, filter: process.env.PROOF_REGEX ?? "^(a+)+$" } }, 60_000);
      await Bun.sleep(200);
      const t0 = Date.now();
      const ping = await s.request(s.id(), "ping", undefined, 30_000);
      proofLine("regex-stall", { tried: 1, crashes: 0, hangs: ping ? 0 : 1, orphans: 0, bytes_lost: 0 }, `ping_during_filter=${ping ? `${Date.now() - t0}ms` : "none-within-30000ms"}`);
      expect(ping).not.toBeNull();
      void slow;
    } finally {
      // A server stuck in a regex cannot shut down cleanly: close() falls back to SIGKILL.
      await s.close(3000);
    }
  }, 60_000);

  test("a catastrophic-backtracking notify_pattern does not stall the server", async () => {
    const s = new RawSession();
    try {
      await s.initialize();
      // The watch tests every output line as it arrives, inside the server.
      const bg = await s.call("bash", {
        command: "sleep 0.3; for i in $(seq 1 20); do printf 'a%.0s' $(seq 1 40); echo '!'; done; sleep 30",
        run_in_background: true,
        notify_pattern: "^(a+)+$",
      });
      // Either the watch runs and the server stays responsive, or the pattern is refused up front.
      if (bg.task_id === undefined) {
        expect(bg.error_code).toBe("INVALID_ARGUMENT");
        expect(bg.error).toContain("notify_pattern");
      }
      await Bun.sleep(1000);
      const t0 = Date.now();
      const ping = await s.request(s.id(), "ping", undefined, 30_000);
      proofLine("regex-stall-watch", { tried: 1, crashes: 0, hangs: ping ? 0 : 1, orphans: 0, bytes_lost: 0 }, `ping_during_watch=${ping ? `${Date.now() - t0}ms` : "none-within-30000ms"}`);
      expect(ping).not.toBeNull();
    } finally {
      await s.close(3000);
    }
  }, 60_000);
});
