/**
 * The cost of a command line's decision (SPEC §22: rules and §6 over every simple command
 * the bash parser finds): the grammar's one-time load, and the median per call for a
 * typical 200-character line with ten user rules. Run: bun run bench/guard.ts
 */
import { parserReady } from "../src/safety/parser/bash-parser.ts";
import { decideLine } from "../src/safety/rules/decide.ts";
import { compileRules, RuleSchema } from "../src/safety/rules/rules.ts";

const t0 = performance.now();
await parserReady();
const loadMs = performance.now() - t0;

const LINE = `cd /tmp/work && git status --short | grep -v '^??' ; for f in $(ls src/*.ts); do echo "file: $f"; wc -l "$f"; done && bash -c 'git log --oneline -5' && echo $(date +%s) > out.txt; rm -rf ./build/cache`;
const rules = compileRules(
  [
    { prefix: ["git", "push"], decision: "deny" },
    { prefix: ["rm", "-rf", "node_modules"], decision: "allow" },
    { prefix: ["npm", "install"], decision: "ask" },
    { prefix: ["docker", "*", "prune"], decision: "deny" },
    { pattern: "^terraform (apply|destroy)", decision: "deny" },
    { prefix: ["kubectl", "delete"], decision: "ask" },
    { prefix: ["cargo", "publish"], decision: "deny" },
    { prefix: ["make", "deploy"], decision: "deny" },
    { pattern: "^curl .*--upload-file", decision: "ask" },
    { prefix: ["gh", "release"], decision: "ask" },
  ].map((r) => RuleSchema.parse(r)),
  "bench",
);
const first = performance.now();
decideLine(LINE, rules);
const firstMs = performance.now() - first;
for (let i = 0; i < 500; i++) decideLine(LINE, rules);
const samples: number[] = [];
for (let i = 0; i < 2000; i++) {
  const s = performance.now();
  decideLine(LINE, rules);
  samples.push(performance.now() - s);
}
samples.sort((a, b) => a - b);
const q = (p: number) => samples[Math.floor(p * (samples.length - 1))]!.toFixed(3);
console.log(JSON.stringify({ line_chars: LINE.length, rules: rules.length, grammar_load_ms: +loadMs.toFixed(1), first_decision_ms: +firstMs.toFixed(2), median_ms: +q(0.5), p90_ms: +q(0.9), p99_ms: +q(0.99) }));
