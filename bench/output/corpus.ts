/**
 * The output corpus: real tools run on this machine at bench time, each in its own temp dir.
 * A log's setup writes its project and returns the command to run there and its needles (the
 * lines a model must be able to read in the result: errors, failures and the verdict).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export interface LogSetup {
  command: string;
  needles: string[];
}

export interface CorpusContext {
  /** The log's own empty directory (removed by the bench); each run gets a fresh copy of it at another path. */
  dir: string;
  /** Base URL of the bench's loopback file server, e.g. http://127.0.0.1:41234. */
  url: string;
}

export interface CorpusLog {
  name: string;
  what: string;
  /** Noise (progress, passing tests, repeated lines, bulk listing) around what matters: these must also come out ≥5× smaller than raw and smaller than either harness's cut. */
  noisy: boolean;
  setup(ctx: CorpusContext): Promise<LogSetup> | LogSetup;
}

const REPO = resolve(import.meta.dir, "../..");

function run(argv: string[], cwd: string, input?: string): string {
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd, input, encoding: "utf8", maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${argv.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

function write(dir: string, files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Passing arithmetic tests and two real failures, shared by the bun and Vitest suites. */
function suite(files: number, perFile: number, importLine: string, log: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (let f = 0; f < files; f++) {
    const body = [
      importLine,
      `describe("module ${f}", () => {`,
      `  for (let i = 0; i < ${perFile}; i++) {`,
      `    test(\`adds \${i} and ${f}\`, () => {`,
      log ? `      console.log(\`fetching fixture \${i} for module ${f} from cache\`);` : "",
      `      expect(i + ${f}).toBe(${f} + i);`,
      `    });`,
      `  }`,
      `});`,
    ];
    out[`test/module${f}.test.ts`] = body.join("\n") + "\n";
  }
  out["test/invoice.test.ts"] = [
    importLine,
    `function parseTotal(s: string): number { return parseFloat(s); }`,
    `function isoDate(y: number, m: number, d: number): string { return \`\${y}-\${m}-\${d}\`; }`,
    `describe("invoice", () => {`,
    `  test("parses the total in cents", () => {`,
    `    expect(parseTotal("12.50")).toBe(1250);`,
    `  });`,
    `  test("formats the due date as ISO", () => {`,
    `    expect(isoDate(2026, 1, 2)).toBe("2026-01-02");`,
    `  });`,
    `});`,
  ].join("\n") + "\n";
  return out;
}

export const corpus: CorpusLog[] = [
  {
    name: "bun-test",
    noisy: true,
    what: "`bun test`: 1,000 passing tests in 20 files, 2 failing",
    setup({ dir }) {
      write(dir, suite(20, 50, `import { describe, expect, test } from "bun:test";`, false));
      return {
        command: "bun test",
        needles: [
          "invoice > parses the total in cents",
          "Expected: 1250",
          "Received: 12.5",
          "invoice > formats the due date as ISO",
          `Expected: "2026-01-02"`,
          `Received: "2026-1-2"`,
          "1000 pass",
          "2 fail",
        ],
      };
    },
  },
  {
    name: "vitest",
    noisy: true,
    what: "`vitest run` (vitest 4.1.12 from npm): 300 passing tests logging to the console, 2 failing",
    setup({ dir }) {
      write(dir, { "package.json": JSON.stringify({ name: "corpus-vitest", private: true, type: "module" }) });
      run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "vitest@4.1.12"], dir);
      write(dir, suite(6, 50, `import { describe, expect, test } from "vitest";`, true));
      return {
        command: "npx vitest run",
        needles: [
          "invoice > parses the total in cents",
          "expected 12.5 to be 1250",
          "invoice > formats the due date as ISO",
          "expected '2026-1-2' to be '2026-01-02'",
          "2 failed",
          "300 passed",
        ],
      };
    },
  },
  {
    name: "tsc",
    noisy: false,
    what: "`tsc -p .`: 60 files, 24 type errors in 4 of them",
    setup({ dir }) {
      const files: Record<string, string> = {
        "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "esnext", moduleResolution: "bundler" }, include: ["src"] }),
      };
      for (let i = 0; i < 60; i++) {
        const lines = [`export interface Row${i} { id: number; name: string; total: number }`];
        if ([7, 19, 33, 52].includes(i)) {
          for (let e = 0; e < 6; e++) lines.push(`export const bad${i}_${e}: number = "row ${e}";`);
        }
        lines.push(`export function sum${i}(rows: Row${i}[]): number { return rows.reduce((a, r) => a + r.total, 0); }`);
        files[`src/mod${i}.ts`] = lines.join("\n") + "\n";
      }
      write(dir, files);
      return {
        command: `${join(REPO, "node_modules/.bin/tsc")} -p .`,
        needles: [
          "src/mod7.ts(2,14): error TS2322: Type 'string' is not assignable to type 'number'.",
          "src/mod33.ts(4,14): error TS2322",
          "src/mod52.ts(7,14): error TS2322",
        ],
      };
    },
  },
  {
    name: "npm-install",
    noisy: false,
    what: "`npm install` of express and two small packages; the project's postinstall fails",
    setup({ dir }) {
      write(dir, {
        "package.json": JSON.stringify(
          {
            name: "corpus-npm",
            version: "1.0.0",
            private: true,
            scripts: { postinstall: "node scripts/build-native.js" },
            dependencies: { express: "5.1.0", ms: "2.1.3", "is-number": "7.0.0" },
          },
          null,
          2,
        ),
        "scripts/build-native.js": `console.error("Error: prebuilt binding not found for linux-x64 (node " + process.versions.modules + ")");\nprocess.exit(1);\n`,
      });
      return {
        command: "npm install",
        needles: ["Error: prebuilt binding not found for linux-x64", "npm error command failed", "npm error code 1"],
      };
    },
  },
  {
    name: "c-build",
    noisy: true,
    what: "`make -k` of 400 C files with -Wall: 2 errors, 3 warnings",
    setup({ dir }) {
      const files: Record<string, string> = {
        Makefile: [
          "CFLAGS = -Wall -Wextra -O2 -g -fPIC -Iinclude -Ithird_party/zlib -Ithird_party/yaml/include -DNDEBUG -DPARSER_VERSION=\\\"1.4.2\\\"",
          "SRC = $(sort $(wildcard src/*.c))",
          "OBJ = $(patsubst src/%.c,build/%.o,$(SRC))",
          "all: app",
          "app: $(OBJ)",
          "\t$(CC) -o $@ $^",
          "build/%.o: src/%.c | build",
          "\t$(CC) $(CFLAGS) -c $< -o $@",
          "build:",
          "\tmkdir -p build",
          "",
        ].join("\n"),
      };
      for (let i = 0; i < 400; i++) {
        const n = String(i).padStart(3, "0");
        let body = `int part${n}(int x) {\n  int y = x * ${i + 1};\n  return y + ${i};\n}\n`;
        if (i === 77) body = `int part${n}(int x) {\n  int y = x * 2;\n  return y + countr;\n}\n`;
        if (i === 211) body = `struct point { int x, y; };\nint part${n}(int x) {\n  struct point p = { x, x };\n  int *q = p;\n  return *q;\n}\n`;
        if ([15, 140, 260].includes(i)) body = `int part${n}(int x) {\n  int unused_${n};\n  return x;\n}\n`;
        if (i === 0) body += `int main(void) { return part000(1); }\n`;
        files[`src/part${n}.c`] = body;
      }
      write(dir, files);
      return {
        command: "make -k -j2",
        needles: [
          "src/part077.c:3:14: error:",
          "undeclared (first use in this function)",
          "src/part211.c:4:12: error: incompatible types when initializing type",
          "make: *** [Makefile:8: build/part077.o] Error 1",
          "make: *** [Makefile:8: build/part211.o] Error 1",
        ],
      };
    },
  },
  {
    name: "python-traceback",
    noisy: true,
    what: "a Python ETL job: 3,000 log lines, a logged exception, then a chained traceback",
    setup({ dir }) {
      write(dir, {
        "etl.py": [
          "import logging, sys",
          "logging.basicConfig(level=logging.INFO, stream=sys.stdout, format='%(asctime)s %(levelname)s %(name)s %(message)s')",
          "log = logging.getLogger('etl')",
          "",
          "def load_batch(batch, rows):",
          "    return {r['customer_id']: r for r in rows}",
          "",
          "def commit(batch, rows):",
          "    try:",
          "        return load_batch(batch, rows)",
          "    except KeyError as e:",
          "        raise RuntimeError(f'batch {batch} failed: missing {e}') from e",
          "",
          "for batch in range(3000):",
          "    rows = [{'customer_id': i, 'total': i * 3} for i in range(batch % 7 + 1)]",
          "    if batch == 1234:",
          "        try:",
          "            int('12,50')",
          "        except ValueError:",
          "            log.exception('could not parse total in batch %d, skipping row', batch)",
          "    if batch == 2871:",
          "        rows.append({'total': 5})",
          "        commit(batch, rows)",
          "    log.info('worker-%d processed batch %d (%d rows) in %.1fms', batch % 4, batch, len(rows), (batch % 13) * 1.7)",
          "",
        ].join("\n"),
      });
      return {
        command: "python3 etl.py",
        needles: [
          "could not parse total in batch 1234, skipping row",
          `ValueError: invalid literal for int() with base 10: '12,50'`,
          "Traceback (most recent call last):",
          "KeyError: 'customer_id'",
          "The above exception was the direct cause of the following exception:",
          "RuntimeError: batch 2871 failed: missing 'customer_id'",
        ],
      };
    },
  },
  {
    name: "download",
    noisy: true,
    what: "curl --progress-bar and a Python downloader with coloured \\r progress bars from a loopback server; one checksum fails",
    setup({ dir, url }) {
      write(dir, {
        "fetch.py": [
          "import hashlib, sys, urllib.request",
          "base = sys.argv[1]",
          "expected = {'model-00001.bin': None, 'model-00002.bin': None, 'model-00003.bin': '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'}",
          "bad = 0",
          "for name, want in expected.items():",
          "    with urllib.request.urlopen(f'{base}/{name}') as r:",
          "        total = int(r.headers['Content-Length']); got = 0; h = hashlib.sha256()",
          "        while True:",
          "            chunk = r.read(16384)",
          "            if not chunk: break",
          "            got += len(chunk); h.update(chunk)",
          "            pct = got * 100 // total; bar = '█' * (pct // 5) + ' ' * (20 - pct // 5)",
          "            sys.stdout.write(f'\\r\\x1b[32m{name}\\x1b[0m {pct:3d}%|{bar}| {got/1e6:.1f}M/{total/1e6:.1f}M')",
          "            sys.stdout.flush()",
          "    sys.stdout.write('\\n')",
          "    digest = h.hexdigest()",
          "    if want and digest != want:",
          "        print(f'ERROR: checksum mismatch for {name}: expected {want[:12]}, got {digest[:12]}', file=sys.stderr); bad += 1",
          "    else:",
          "        print(f'saved {name} ({total} bytes)')",
          "sys.exit(1 if bad else 0)",
          "",
        ].join("\n"),
      });
      return {
        command: `curl -fSL --progress-bar -o tokenizer.json ${url}/tokenizer.json -w 'tokenizer.json: %{size_download} bytes\\n' && python3 fetch.py ${url}`,
        needles: ["ERROR: checksum mismatch for model-00003.bin: expected 9f86d081884c"],
      };
    },
  },
  {
    name: "git-log",
    noisy: true,
    what: "`git log -p` of a made-up 600-commit history (git fast-import, fixed dates)",
    setup({ dir }) {
      run(["git", "init", "-q", "-b", "main", dir], dir);
      run(["git", "fast-import", "--quiet"], dir, fastImportStream(600));
      const head = run(["git", "rev-parse", "HEAD"], dir).trim();
      return {
        command: "git --no-pager log -p",
        needles: [`commit ${head}`, "Release 6.0.0: parser handles nested tables", "Initial commit"],
      };
    },
  },
  {
    name: "find-usr",
    noisy: true,
    what: "`find /usr /opt/missing`: every path under /usr, and one root that does not exist",
    setup() {
      return { command: "find /usr /opt/missing", needles: ["/opt/missing", "No such file or directory"] };
    },
  },
];

/** A deterministic history: a small root commit, then commits that rewrite slices of 12 source files. */
function fastImportStream(commits: number): string {
  let out = "";
  const files = Array.from({ length: 12 }, (_, f) => Array.from({ length: 120 }, (_, l) => `value_${f}_${l} = ${(f * 31 + l * 7) % 97}`));
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  for (let c = 1; c <= commits; c++) {
    const when = 1_700_000_000 + c * 3_600;
    const msg = c === 1 ? "Initial commit" : c === commits ? "Release 6.0.0: parser handles nested tables" : `parser: tune table ${c % 12} rule ${c}`;
    out += `commit refs/heads/main\nmark :${c}\nauthor Dev <dev@example.com> ${when} +0000\ncommitter Dev <dev@example.com> ${when} +0000\n`;
    out += data(msg);
    if (c > 1) out += `from :${c - 1}\n`;
    if (c === 1) out += `M 100644 inline README.md\n${data("# parser\n")}`;
    else {
      const f = c % 12;
      for (let k = 0; k < 8; k++) {
        const l = (c * 13 + k * 5) % 120;
        files[f]![l] = `value_${f}_${l} = ${(c * 17 + k) % 101} # rev ${c}`;
      }
      out += `M 100644 inline src/table${f}.py\n${data(files[f]!.join("\n") + "\n")}`;
    }
    out += "\n";
  }
  return out;
}
